  1 run.started                       [] running
  2 agent.started     pricing_lead    [pricing_lead] via run
  3 model.started     pricing_lead    [pricing_lead]
  4 model.finished    pricing_lead    [pricing_lead]
  5 message           pricing_lead    [pricing_lead] assistant
  6 tool.started      pricing_lead    [pricing_lead] write_todos pricing_lead_call_1
  7 tool.finished     pricing_lead    [pricing_lead] write_todos pricing_lead_call_1
  8 session.set       pricing_lead    [pricing_lead] deep_agent_session_key_todos set by pricing_lead
  9 message           pricing_lead    [pricing_lead] tool
 10 model.started     pricing_lead    [pricing_lead]
 11 model.finished    pricing_lead    [pricing_lead]
 12 message           pricing_lead    [pricing_lead] assistant
 13 tool.started      pricing_lead    [pricing_lead] task pricing_lead_call_2
 14 agenttool.entered pricing_lead    [pricing_lead] pricing_lead -> market_researcher pricing_lead_call_2
 15 agent.started     market_researcher [pricing_lead>market_researcher] via agenttool
 16 model.started     market_researcher [pricing_lead>market_researcher]
 17 model.finished    market_researcher [pricing_lead>market_researcher]
 18 message           market_researcher [pricing_lead>market_researcher] assistant
 19 tool.started      market_researcher [pricing_lead>market_researcher] search_prices market_researcher_call_1
 20 tool.finished     market_researcher [pricing_lead>market_researcher] search_prices market_researcher_call_1
 21 message           market_researcher [pricing_lead>market_researcher] tool
 22 model.started     market_researcher [pricing_lead>market_researcher]
 23 model.finished    market_researcher [pricing_lead>market_researcher]
 24 message           market_researcher [pricing_lead>market_researcher] assistant
 25 agent.finished    market_researcher [pricing_lead>market_researcher]
 26 agenttool.exited  pricing_lead    [pricing_lead] pricing_lead -> market_researcher pricing_lead_call_2 inner events: callbacks
 27 tool.finished     pricing_lead    [pricing_lead] task pricing_lead_call_2
 28 message           pricing_lead    [pricing_lead] tool
 29 model.started     pricing_lead    [pricing_lead]
 30 model.finished    pricing_lead    [pricing_lead]
 31 message           pricing_lead    [pricing_lead] assistant
 32 tool.started      pricing_lead    [pricing_lead] write_todos pricing_lead_call_3
 33 tool.finished     pricing_lead    [pricing_lead] write_todos pricing_lead_call_3
 34 session.set       pricing_lead    [pricing_lead] deep_agent_session_key_todos set by pricing_lead
 35 message           pricing_lead    [pricing_lead] tool
 36 model.started     pricing_lead    [pricing_lead]
 37 model.finished    pricing_lead    [pricing_lead]
 38 message           pricing_lead    [pricing_lead] assistant
 39 tool.started      pricing_lead    [pricing_lead] task pricing_lead_call_4
 40 agenttool.entered pricing_lead    [pricing_lead] pricing_lead -> pricing_analyst pricing_lead_call_4
 41 agent.started     pricing_analyst [pricing_lead>pricing_analyst] via agenttool
 42 model.started     pricing_analyst [pricing_lead>pricing_analyst]
 43 model.finished    pricing_analyst [pricing_lead>pricing_analyst]
 44 message           pricing_analyst [pricing_lead>pricing_analyst] assistant
 45 tool.started      pricing_analyst [pricing_lead>pricing_analyst] margin_at pricing_analyst_call_1
 46 tool.finished     pricing_analyst [pricing_lead>pricing_analyst] margin_at pricing_analyst_call_1
 47 message           pricing_analyst [pricing_lead>pricing_analyst] tool
 48 model.started     pricing_analyst [pricing_lead>pricing_analyst]
 49 model.finished    pricing_analyst [pricing_lead>pricing_analyst]
 50 message           pricing_analyst [pricing_lead>pricing_analyst] assistant
 51 agent.finished    pricing_analyst [pricing_lead>pricing_analyst]
 52 agenttool.exited  pricing_lead    [pricing_lead] pricing_lead -> pricing_analyst pricing_lead_call_4 inner events: callbacks
 53 tool.finished     pricing_lead    [pricing_lead] task pricing_lead_call_4
 54 message           pricing_lead    [pricing_lead] tool
 55 model.started     pricing_lead    [pricing_lead]
 56 model.finished    pricing_lead    [pricing_lead]
 57 message           pricing_lead    [pricing_lead] assistant
 58 tool.started      pricing_lead    [pricing_lead] write_todos pricing_lead_call_5
 59 tool.finished     pricing_lead    [pricing_lead] write_todos pricing_lead_call_5
 60 session.set       pricing_lead    [pricing_lead] deep_agent_session_key_todos set by pricing_lead
 61 message           pricing_lead    [pricing_lead] tool
 62 model.started     pricing_lead    [pricing_lead]
 63 model.finished    pricing_lead    [pricing_lead]
 64 message           pricing_lead    [pricing_lead] assistant
 65 agent.finished    pricing_lead    [pricing_lead]
 66 run.finished                      [] completed
