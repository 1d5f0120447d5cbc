# doc module
