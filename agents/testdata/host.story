  1 run.started                       [] running
  2 agent.started     concierge       [concierge] via run
  3 model.started     concierge       [concierge]
  4 model.finished    concierge       [concierge]
  5 transfer          concierge       [concierge] concierge -> refunds_desk (llm)
  6 agent.started     refunds_desk    [concierge>refunds_desk] via transfer
  7 model.started     refunds_desk    [concierge>refunds_desk]
  8 model.finished    refunds_desk    [concierge>refunds_desk]
  9 message           refunds_desk    [concierge>refunds_desk] assistant
 10 agent.finished    refunds_desk    [concierge>refunds_desk]
 11 message           concierge       [concierge] assistant
 12 agent.finished    concierge       [concierge]
 13 run.finished                      [] completed
