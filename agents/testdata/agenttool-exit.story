  1 run.started                       [] running
  2 agent.started     concierge       [concierge] via run
  3 model.started     concierge       [concierge]
  4 model.finished    concierge       [concierge]
  5 message           concierge       [concierge] assistant
  6 tool.started      concierge       [concierge] refund_agent concierge_call_1
  7 agenttool.entered concierge       [concierge] concierge -> refund_agent concierge_call_1
  8 agent.started     refund_agent    [concierge>refund_agent] via agenttool
  9 model.started     refund_agent    [concierge>refund_agent]
 10 model.finished    refund_agent    [concierge>refund_agent]
 11 message           refund_agent    [concierge>refund_agent] assistant
 12 tool.started      refund_agent    [concierge>refund_agent] issue_refund refund_agent_call_1
 13 tool.finished     refund_agent    [concierge>refund_agent] issue_refund refund_agent_call_1
 14 message           refund_agent    [concierge>refund_agent] tool
 15 model.started     refund_agent    [concierge>refund_agent]
 16 model.finished    refund_agent    [concierge>refund_agent]
 17 message           refund_agent    [concierge>refund_agent] assistant
 18 tool.started      refund_agent    [concierge>refund_agent] exit refund_agent_call_2
 19 tool.finished     refund_agent    [concierge>refund_agent] exit refund_agent_call_2
 20 message           refund_agent    [concierge>refund_agent] tool
 21 exit              refund_agent    [concierge>refund_agent]
 22 agent.finished    refund_agent    [concierge>refund_agent]
 23 agenttool.exited  concierge       [concierge] concierge -> refund_agent concierge_call_1 inner events: stream
 24 tool.finished     concierge       [concierge] refund_agent concierge_call_1
 25 message           concierge       [concierge] tool
 26 model.started     concierge       [concierge]
 27 model.finished    concierge       [concierge]
 28 message           concierge       [concierge] assistant
 29 tool.started      concierge       [concierge] orders_desk concierge_call_2
 30 agenttool.entered concierge       [concierge] concierge -> orders_desk concierge_call_2
 31 agent.started     orders_desk     [concierge>orders_desk] via agenttool
 32 model.started     orders_desk     [concierge>orders_desk]
 33 model.finished    orders_desk     [concierge>orders_desk]
 34 message           orders_desk     [concierge>orders_desk] assistant
 35 tool.started      orders_desk     [concierge>orders_desk] transfer_to_agent orders_desk_call_1
 36 tool.finished     orders_desk     [concierge>orders_desk] transfer_to_agent orders_desk_call_1
 37 message           orders_desk     [concierge>orders_desk] tool
 38 transfer          orders_desk     [concierge>orders_desk] orders_desk -> shipping_agent (llm)
 39 agent.finished    orders_desk     [concierge>orders_desk]
 40 agent.started     shipping_agent  [concierge>orders_desk>shipping_agent] via transfer
 41 model.started     shipping_agent  [concierge>orders_desk>shipping_agent]
 42 model.finished    shipping_agent  [concierge>orders_desk>shipping_agent]
 43 message           shipping_agent  [concierge>orders_desk>shipping_agent] assistant
 44 tool.started      shipping_agent  [concierge>orders_desk>shipping_agent] track_parcel shipping_agent_call_1
 45 tool.finished     shipping_agent  [concierge>orders_desk>shipping_agent] track_parcel shipping_agent_call_1
 46 message           shipping_agent  [concierge>orders_desk>shipping_agent] tool
 47 model.started     shipping_agent  [concierge>orders_desk>shipping_agent]
 48 model.finished    shipping_agent  [concierge>orders_desk>shipping_agent]
 49 message           shipping_agent  [concierge>orders_desk>shipping_agent] assistant
 50 agent.finished    shipping_agent  [concierge>orders_desk>shipping_agent]
 51 agenttool.exited  concierge       [concierge] concierge -> orders_desk concierge_call_2 inner events: stream
 52 tool.finished     concierge       [concierge] orders_desk concierge_call_2
 53 message           concierge       [concierge] tool
 54 model.started     concierge       [concierge]
 55 model.finished    concierge       [concierge]
 56 message           concierge       [concierge] assistant
 57 agent.finished    concierge       [concierge]
 58 run.finished                      [] completed
