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
 24 agent.finished    support_agent   [support_agent]
 25 run.finished                      [] interrupted
 26 resumed           support_agent   []
 27 agent.started     support_agent   [support_agent] via run
 28 tool.started      support_agent   [support_agent] billing_agent support_agent_call_1
 29 agenttool.entered support_agent   [support_agent] support_agent -> billing_agent support_agent_call_1
 30 agent.started     billing_agent   [support_agent>billing_agent] via agenttool
 31 tool.started      billing_agent   [support_agent>billing_agent] issue_refund billing_agent_call_2
 32 tool.finished     billing_agent   [support_agent>billing_agent] issue_refund billing_agent_call_2
 33 message           billing_agent   [support_agent>billing_agent] tool
 34 model.started     billing_agent   [support_agent>billing_agent]
 35 model.finished    billing_agent   [support_agent>billing_agent]
 36 message           billing_agent   [support_agent>billing_agent] assistant
 37 agent.finished    billing_agent   [support_agent>billing_agent]
 38 agenttool.exited  support_agent   [support_agent] support_agent -> billing_agent support_agent_call_1 inner events: stream
 39 tool.finished     support_agent   [support_agent] billing_agent support_agent_call_1
 40 message           support_agent   [support_agent] tool
 41 model.started     support_agent   [support_agent]
 42 model.finished    support_agent   [support_agent]
 43 message           support_agent   [support_agent] assistant
 44 agent.finished    support_agent   [support_agent]
 45 run.finished                      [] completed
