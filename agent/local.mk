# agent module
AGENT_LIBS =
