dist_man_MANS += doc/kfixd.8 doc/kfixctl.1 doc/kfix.conf.5
