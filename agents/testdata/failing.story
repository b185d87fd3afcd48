  1 run.started                       [] running
  2 agent.started     release_manager [release_manager] via run
  3 model.started     release_manager [release_manager]
  4 model.finished    release_manager [release_manager]
  5 message           release_manager [release_manager] assistant
  6 tool.started      release_manager [release_manager] check_ci release_manager_call_1
  7 tool.finished     release_manager [release_manager] check_ci release_manager_call_1
  8 message           release_manager [release_manager] tool
  9 model.started     release_manager [release_manager]
 10 model.finished    release_manager [release_manager]
 11 message           release_manager [release_manager] assistant
 12 tool.started      release_manager [release_manager] transfer_to_agent release_manager_call_2
 13 tool.finished     release_manager [release_manager] transfer_to_agent release_manager_call_2
 14 message           release_manager [release_manager] tool
 15 transfer          release_manager [release_manager] release_manager -> db_agent (llm)
 16 agent.finished    release_manager [release_manager]
 17 agent.started     db_agent        [release_manager>db_agent] via transfer
 18 model.started     db_agent        [release_manager>db_agent]
 19 model.finished    db_agent        [release_manager>db_agent]
 20 message           db_agent        [release_manager>db_agent] assistant
 21 tool.started      db_agent        [release_manager>db_agent] backup_database db_agent_call_1
 22 tool.finished     db_agent        [release_manager>db_agent] backup_database db_agent_call_1
 23 message           db_agent        [release_manager>db_agent] tool
 24 model.started     db_agent        [release_manager>db_agent]
 25 model.finished    db_agent        [release_manager>db_agent]
 26 message           db_agent        [release_manager>db_agent] assistant
 27 tool.started      db_agent        [release_manager>db_agent] run_migrations db_agent_call_2
 28 tool.finished     db_agent        [release_manager>db_agent] run_migrations db_agent_call_2
 29 error             db_agent        [release_manager>db_agent]
 30 agent.finished    db_agent        [release_manager>db_agent]
 31 run.finished                      [] failed
