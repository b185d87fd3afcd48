  1 run.started                       [] running
  2 agent.started     supervisor      [supervisor] via run
  3 model.started     supervisor      [supervisor]
  4 model.finished    supervisor      [supervisor]
  5 message           supervisor      [supervisor] assistant
  6 tool.started      supervisor      [supervisor] research_agent supervisor_call_1
  7 agenttool.entered supervisor      [supervisor] supervisor -> research_agent supervisor_call_1
  8 agent.started     research_agent  [supervisor>research_agent] via agenttool
  9 model.started     research_agent  [supervisor>research_agent]
 10 model.finished    research_agent  [supervisor>research_agent]
 11 message           research_agent  [supervisor>research_agent] assistant
 12 tool.started      research_agent  [supervisor>research_agent] search research_agent_call_1
 13 tool.finished     research_agent  [supervisor>research_agent] search research_agent_call_1
 14 tool.started      research_agent  [supervisor>research_agent] search research_agent_call_2
 15 tool.finished     research_agent  [supervisor>research_agent] search research_agent_call_2
 16 message           research_agent  [supervisor>research_agent] tool
 17 message           research_agent  [supervisor>research_agent] tool
 18 model.started     research_agent  [supervisor>research_agent]
 19 model.finished    research_agent  [supervisor>research_agent]
 20 message           research_agent  [supervisor>research_agent] assistant
 21 agent.finished    research_agent  [supervisor>research_agent]
 22 agenttool.exited  supervisor      [supervisor] supervisor -> research_agent supervisor_call_1 inner events: stream
 23 tool.finished     supervisor      [supervisor] research_agent supervisor_call_1
 24 message           supervisor      [supervisor] tool
 25 model.started     supervisor      [supervisor]
 26 model.finished    supervisor      [supervisor]
 27 message           supervisor      [supervisor] assistant
 28 tool.started      supervisor      [supervisor] math_agent supervisor_call_2
 29 agenttool.entered supervisor      [supervisor] supervisor -> math_agent supervisor_call_2
 30 agent.started     math_agent      [supervisor>math_agent] via agenttool
 31 model.started     math_agent      [supervisor>math_agent]
 32 model.finished    math_agent      [supervisor>math_agent]
 33 message           math_agent      [supervisor>math_agent] assistant
 34 tool.started      math_agent      [supervisor>math_agent] divide math_agent_call_1
 35 tool.finished     math_agent      [supervisor>math_agent] divide math_agent_call_1
 36 message           math_agent      [supervisor>math_agent] tool
 37 model.started     math_agent      [supervisor>math_agent]
 38 model.finished    math_agent      [supervisor>math_agent]
 39 message           math_agent      [supervisor>math_agent] assistant
 40 tool.started      math_agent      [supervisor>math_agent] multiply math_agent_call_2
 41 tool.finished     math_agent      [supervisor>math_agent] multiply math_agent_call_2
 42 message           math_agent      [supervisor>math_agent] tool
 43 model.started     math_agent      [supervisor>math_agent]
 44 model.finished    math_agent      [supervisor>math_agent]
 45 message           math_agent      [supervisor>math_agent] assistant
 46 agent.finished    math_agent      [supervisor>math_agent]
 47 agenttool.exited  supervisor      [supervisor] supervisor -> math_agent supervisor_call_2 inner events: stream
 48 tool.finished     supervisor      [supervisor] math_agent supervisor_call_2
 49 message           supervisor      [supervisor] tool
 50 model.started     supervisor      [supervisor]
 51 model.finished    supervisor      [supervisor]
 52 message           supervisor      [supervisor] assistant
 53 agent.finished    supervisor      [supervisor]
 54 run.finished                      [] completed
