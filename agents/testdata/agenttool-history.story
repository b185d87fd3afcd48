  1 run.started                       [] running
  2 agent.started     support_lead    [support_lead] via run
  3 model.started     support_lead    [support_lead]
  4 model.finished    support_lead    [support_lead]
  5 message           support_lead    [support_lead] assistant
  6 tool.started      support_lead    [support_lead] lookup_customer support_lead_call_1
  7 tool.finished     support_lead    [support_lead] lookup_customer support_lead_call_1
  8 message           support_lead    [support_lead] tool
  9 model.started     support_lead    [support_lead]
 10 model.finished    support_lead    [support_lead]
 11 message           support_lead    [support_lead] assistant
 12 tool.started      support_lead    [support_lead] escalation_agent support_lead_call_2
 13 agenttool.entered support_lead    [support_lead] support_lead -> escalation_agent support_lead_call_2
 14 agent.started     escalation_agent [support_lead>escalation_agent] via agenttool
 15 model.started     escalation_agent [support_lead>escalation_agent]
 16 model.finished    escalation_agent [support_lead>escalation_agent]
 17 message           escalation_agent [support_lead>escalation_agent] assistant
 18 tool.started      escalation_agent [support_lead>escalation_agent] credit_invoice escalation_agent_call_1
 19 tool.finished     escalation_agent [support_lead>escalation_agent] credit_invoice escalation_agent_call_1
 20 message           escalation_agent [support_lead>escalation_agent] tool
 21 model.started     escalation_agent [support_lead>escalation_agent]
 22 model.finished    escalation_agent [support_lead>escalation_agent]
 23 message           escalation_agent [support_lead>escalation_agent] assistant
 24 agent.finished    escalation_agent [support_lead>escalation_agent]
 25 agenttool.exited  support_lead    [support_lead] support_lead -> escalation_agent support_lead_call_2 inner events: stream
 26 tool.finished     support_lead    [support_lead] escalation_agent support_lead_call_2
 27 message           support_lead    [support_lead] tool
 28 model.started     support_lead    [support_lead]
 29 model.finished    support_lead    [support_lead]
 30 message           support_lead    [support_lead] assistant
 31 agent.finished    support_lead    [support_lead]
 32 run.finished                      [] completed
