  1 run.started                       [] running
  2 agent.started     supervisor      [supervisor>supervisor] via run
  3 model.started     supervisor      [supervisor>supervisor]
  4 model.finished    supervisor      [supervisor>supervisor]
  5 message           supervisor      [supervisor>supervisor] assistant
  6 tool.started      supervisor      [supervisor>supervisor] transfer_to_agent supervisor_call_1
  7 tool.finished     supervisor      [supervisor>supervisor] transfer_to_agent supervisor_call_1
  8 message           supervisor      [supervisor>supervisor] tool
  9 transfer          supervisor      [supervisor>supervisor] supervisor -> research_agent (llm)
 10 agent.finished    supervisor      [supervisor>supervisor]
 11 agent.started     research_agent  [supervisor>supervisor>research_agent] via transfer
 12 model.started     research_agent  [supervisor>supervisor>research_agent]
 13 model.finished    research_agent  [supervisor>supervisor>research_agent]
 14 message           research_agent  [supervisor>supervisor>research_agent] assistant
 15 tool.started      research_agent  [supervisor>supervisor>research_agent] search research_agent_call_1
 16 tool.finished     research_agent  [supervisor>supervisor>research_agent] search research_agent_call_1
 17 tool.started      research_agent  [supervisor>supervisor>research_agent] search research_agent_call_2
 18 tool.finished     research_agent  [supervisor>supervisor>research_agent] search research_agent_call_2
 19 message           research_agent  [supervisor>supervisor>research_agent] tool
 20 message           research_agent  [supervisor>supervisor>research_agent] tool
 21 model.started     research_agent  [supervisor>supervisor>research_agent]
 22 model.finished    research_agent  [supervisor>supervisor>research_agent]
 23 message           research_agent  [supervisor>supervisor>research_agent] assistant
 24 message           research_agent  [supervisor>supervisor>research_agent] assistant
 25 message           research_agent  [supervisor>supervisor>research_agent] tool
 26 transfer          research_agent  [supervisor>supervisor>research_agent] research_agent -> supervisor (deterministic)
 27 agent.finished    research_agent  [supervisor>supervisor>research_agent]
 28 agent.started     supervisor      [supervisor>supervisor>research_agent>supervisor] via transfer
 29 model.started     supervisor      [supervisor>supervisor>research_agent>supervisor]
 30 model.finished    supervisor      [supervisor>supervisor>research_agent>supervisor]
 31 message           supervisor      [supervisor>supervisor>research_agent>supervisor] assistant
 32 tool.started      supervisor      [supervisor>supervisor>research_agent>supervisor] transfer_to_agent supervisor_call_2
 33 tool.finished     supervisor      [supervisor>supervisor>research_agent>supervisor] transfer_to_agent supervisor_call_2
 34 message           supervisor      [supervisor>supervisor>research_agent>supervisor] tool
 35 transfer          supervisor      [supervisor>supervisor>research_agent>supervisor] supervisor -> math_agent (llm)
 36 agent.finished    supervisor      [supervisor>supervisor>research_agent>supervisor]
 37 agent.started     math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent] via transfer
 38 model.started     math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent]
 39 model.finished    math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent]
 40 message           math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent] assistant
 41 tool.started      math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent] divide math_agent_call_1
 42 tool.finished     math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent] divide math_agent_call_1
 43 message           math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent] tool
 44 model.started     math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent]
 45 model.finished    math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent]
 46 message           math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent] assistant
 47 tool.started      math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent] multiply math_agent_call_2
 48 tool.finished     math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent] multiply math_agent_call_2
 49 message           math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent] tool
 50 model.started     math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent]
 51 model.finished    math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent]
 52 message           math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent] assistant
 53 message           math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent] assistant
 54 message           math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent] tool
 55 transfer          math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent] math_agent -> supervisor (deterministic)
 56 agent.finished    math_agent      [supervisor>supervisor>research_agent>supervisor>math_agent]
 57 agent.started     supervisor      [supervisor>supervisor>research_agent>supervisor>math_agent>supervisor] via transfer
 58 model.started     supervisor      [supervisor>supervisor>research_agent>supervisor>math_agent>supervisor]
 59 model.finished    supervisor      [supervisor>supervisor>research_agent>supervisor>math_agent>supervisor]
 60 message           supervisor      [supervisor>supervisor>research_agent>supervisor>math_agent>supervisor] assistant
 61 agent.finished    supervisor      [supervisor>supervisor>research_agent>supervisor>math_agent>supervisor]
 62 run.finished                      [] completed
