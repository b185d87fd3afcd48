  1 run.started                       [] running
  2 agent.started     project_manager [project_manager] via run
  3 model.started     project_manager [project_manager]
  4 model.finished    project_manager [project_manager]
  5 message           project_manager [project_manager] assistant
  6 tool.started      project_manager [project_manager] research_agent project_manager_call_1
  7 agenttool.entered project_manager [project_manager] project_manager -> research_agent project_manager_call_1
  8 agent.started     research_agent  [project_manager>research_agent] via agenttool
  9 model.started     research_agent  [project_manager>research_agent]
 10 model.finished    research_agent  [project_manager>research_agent]
 11 message           research_agent  [project_manager>research_agent] assistant
 12 tool.started      research_agent  [project_manager>research_agent] web_search research_agent_call_1
 13 tool.finished     research_agent  [project_manager>research_agent] web_search research_agent_call_1
 14 message           research_agent  [project_manager>research_agent] tool
 15 model.started     research_agent  [project_manager>research_agent]
 16 model.finished    research_agent  [project_manager>research_agent]
 17 message           research_agent  [project_manager>research_agent] assistant
 18 session.set       research_agent  [project_manager>research_agent] research_notes set by research_agent
 19 agent.finished    research_agent  [project_manager>research_agent]
 20 agenttool.exited  project_manager [project_manager] project_manager -> research_agent project_manager_call_1 inner events: stream
 21 tool.finished     project_manager [project_manager] research_agent project_manager_call_1
 22 message           project_manager [project_manager] tool
 23 model.started     project_manager [project_manager]
 24 model.finished    project_manager [project_manager]
 25 message           project_manager [project_manager] assistant
 26 tool.started      project_manager [project_manager] code_agent project_manager_call_2
 27 agenttool.entered project_manager [project_manager] project_manager -> code_agent project_manager_call_2
 28 agent.started     code_agent      [project_manager>code_agent] via agenttool
 29 model.started     code_agent      [project_manager>code_agent]
 30 model.finished    code_agent      [project_manager>code_agent]
 31 message           code_agent      [project_manager>code_agent] assistant
 32 tool.started      code_agent      [project_manager>code_agent] write_file code_agent_call_1
 33 tool.finished     code_agent      [project_manager>code_agent] write_file code_agent_call_1
 34 session.set       code_agent      [project_manager>code_agent] file:middleware/ratelimit.go set by code_agent
 35 message           code_agent      [project_manager>code_agent] tool
 36 model.started     code_agent      [project_manager>code_agent]
 37 model.finished    code_agent      [project_manager>code_agent]
 38 message           code_agent      [project_manager>code_agent] assistant
 39 agent.finished    code_agent      [project_manager>code_agent]
 40 agenttool.exited  project_manager [project_manager] project_manager -> code_agent project_manager_call_2 inner events: stream
 41 tool.finished     project_manager [project_manager] code_agent project_manager_call_2
 42 message           project_manager [project_manager] tool
 43 model.started     project_manager [project_manager]
 44 model.finished    project_manager [project_manager]
 45 message           project_manager [project_manager] assistant
 46 tool.started      project_manager [project_manager] review_agent project_manager_call_3
 47 agenttool.entered project_manager [project_manager] project_manager -> review_agent project_manager_call_3
 48 agent.started     review_agent    [project_manager>review_agent] via agenttool
 49 model.started     review_agent    [project_manager>review_agent]
 50 model.finished    review_agent    [project_manager>review_agent]
 51 message           review_agent    [project_manager>review_agent] assistant
 52 tool.started      review_agent    [project_manager>review_agent] run_tests review_agent_call_1
 53 tool.finished     review_agent    [project_manager>review_agent] run_tests review_agent_call_1
 54 message           review_agent    [project_manager>review_agent] tool
 55 model.started     review_agent    [project_manager>review_agent]
 56 model.finished    review_agent    [project_manager>review_agent]
 57 message           review_agent    [project_manager>review_agent] assistant
 58 agent.finished    review_agent    [project_manager>review_agent]
 59 agenttool.exited  project_manager [project_manager] project_manager -> review_agent project_manager_call_3 inner events: stream
 60 tool.finished     project_manager [project_manager] review_agent project_manager_call_3
 61 message           project_manager [project_manager] tool
 62 model.started     project_manager [project_manager]
 63 model.finished    project_manager [project_manager]
 64 message           project_manager [project_manager] assistant
 65 agent.finished    project_manager [project_manager]
 66 run.finished                      [] completed
