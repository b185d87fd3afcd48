  1 run.started                       [] running
  2 agent.started     intake          [intake] via run
  3 model.started     intake          [intake]
  4 model.finished    intake          [intake]
  5 message           intake          [intake] assistant
  6 tool.started      intake          [intake] transfer_to_agent intake_call_1
  7 tool.finished     intake          [intake] transfer_to_agent intake_call_1
  8 message           intake          [intake] tool
  9 transfer          intake          [intake] intake -> legal_agent (llm)
 10 agent.finished    intake          [intake]
 11 agent.started     legal_agent     [intake>legal_agent] via transfer
 12 model.started     legal_agent     [intake>legal_agent]
 13 model.finished    legal_agent     [intake>legal_agent]
 14 message           legal_agent     [intake>legal_agent] assistant
 15 tool.started      legal_agent     [intake>legal_agent] read_contract legal_agent_call_1
 16 tool.finished     legal_agent     [intake>legal_agent] read_contract legal_agent_call_1
 17 message           legal_agent     [intake>legal_agent] tool
 18 model.started     legal_agent     [intake>legal_agent]
 19 model.finished    legal_agent     [intake>legal_agent]
 20 message           legal_agent     [intake>legal_agent] assistant
 21 agent.finished    legal_agent     [intake>legal_agent]
 22 run.finished                      [] completed
