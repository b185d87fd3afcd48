  1 run.started                       [] running
  2 agent.started     concierge       [concierge] via run
  3 model.started     concierge       [concierge]
  4 model.finished    concierge       [concierge]
  5 message           concierge       [concierge] assistant
  6 transfer          concierge       [concierge] concierge -> refunds_desk (llm)
  7 agent.started     refunds_desk    [concierge>refunds_desk] via transfer
  8 model.started     refunds_desk    [concierge>refunds_desk]
  9 model.finished    refunds_desk    [concierge>refunds_desk]
 10 message           refunds_desk    [concierge>refunds_desk] assistant
 11 agent.finished    refunds_desk    [concierge>refunds_desk]
 12 message           concierge       [concierge] assistant
 13 agent.finished    concierge       [concierge]
 14 run.finished                      [] completed
