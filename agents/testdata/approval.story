  1 run.started                       [] running
  2 agent.started     support_agent   [support_agent] via run
  3 model.started     support_agent   [support_agent]
  4 model.finished    support_agent   [support_agent]
  5 message           support_agent   [support_agent] assistant
  6 tool.started      support_agent   [support_agent] billing_agent support_agent_call_1
  7 agenttool.entered support_agent   [support_agent] support_agent -> billing_agent support_agent_call_1
  8 agent.started     billing_agent   [support_agent>billing_agent] via agenttool
  9 model.started     billing_agent   [support_agent>billing_agent]
 10 model.finished    billing_agent   [support_agent>billing_agent]
 11 message           billing_agent   [support_agent>billing_agent] assistant
 12 tool.started      billing_agent   [support_agent>billing_agent] find_charges billing_agent_call_1
 13 tool.finished     billing_agent   [support_agent>billing_agent] find_charges billing_agent_call_1
 14 message           billing_agent   [support_agent>billing_agent] tool
 15 model.started     billing_agent   [support_agent>billing_agent]
 16 model.finished    billing_agent   [support_agent>billing_agent]
 17 message           billing_agent   [support_agent>billing_agent] assistant
 18 tool.started      billing_agent   [support_agent>billing_agent] issue_refund billing_agent_call_2
 19 tool.finished     billing_agent   [support_agent>billing_agent] issue_refund billing_agent_call_2
 20 interrupted       billing_agent   [support_agent>billing_agent]
 21 agent.finished    billing_agent   [support_agent>billing_agent]
 22 agenttool.exited  support_agent   [support_agent] support_agent -> billing_agent support_agent_call_1
 23 tool.finished     support_agent   [support_agent] billing_agent support_agent_call_1
 24 interrupted       support_agent   [support_agent]
 25 agent.finished    support_agent   [support_agent]
 26 run.finished                      [] interrupted
 27 resumed           support_agent   []
 28 agent.started     support_agent   [support_agent] via run
 29 tool.started      support_agent   [support_agent] billing_agent support_agent_call_1
 30 agenttool.entered support_agent   [support_agent] support_agent -> billing_agent support_agent_call_1
 31 agent.started     billing_agent   [support_agent>billing_agent] via agenttool
 32 tool.started      billing_agent   [support_agent>billing_agent] issue_refund billing_agent_call_2
 33 tool.finished     billing_agent   [support_agent>billing_agent] issue_refund billing_agent_call_2
 34 message           billing_agent   [support_agent>billing_agent] tool
 35 model.started     billing_agent   [support_agent>billing_agent]
 36 model.finished    billing_agent   [support_agent>billing_agent]
 37 message           billing_agent   [support_agent>billing_agent] assistant
 38 agent.finished    billing_agent   [support_agent>billing_agent]
 39 agenttool.exited  support_agent   [support_agent] support_agent -> billing_agent support_agent_call_1 inner events: stream
 40 tool.finished     support_agent   [support_agent] billing_agent support_agent_call_1
 41 message           support_agent   [support_agent] tool
 42 model.started     support_agent   [support_agent]
 43 model.finished    support_agent   [support_agent]
 44 message           support_agent   [support_agent] assistant
 45 agent.finished    support_agent   [support_agent]
 46 run.finished                      [] completed
