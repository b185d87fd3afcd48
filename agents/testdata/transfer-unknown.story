  1 run.started                       [] running
  2 agent.started     helpdesk        [helpdesk] via run
  3 model.started     helpdesk        [helpdesk]
  4 model.finished    helpdesk        [helpdesk]
  5 message           helpdesk        [helpdesk] assistant
  6 tool.started      helpdesk        [helpdesk] transfer_to_agent helpdesk_call_1
  7 tool.finished     helpdesk        [helpdesk] transfer_to_agent helpdesk_call_1
  8 message           helpdesk        [helpdesk] tool
  9 transfer          helpdesk        [helpdesk] helpdesk -> refunds_agent (llm) failed
 10 error             helpdesk        [helpdesk]
 11 agent.finished    helpdesk        [helpdesk]
 12 run.finished                      [] failed
