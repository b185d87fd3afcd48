  1 run.started                       [] running
  2 agent.started     trip_planner    [trip_planner] via run
  3 model.started     trip_planner    [trip_planner]
  4 model.finished    trip_planner    [trip_planner]
  5 message           trip_planner    [trip_planner] assistant
  6 tool.started      trip_planner    [trip_planner] flight_agent trip_planner_call_1
  7 agenttool.entered trip_planner    [trip_planner] trip_planner -> flight_agent trip_planner_call_1
  8 agent.started     flight_agent    [trip_planner>flight_agent] via agenttool
  9 model.started     flight_agent    [trip_planner>flight_agent]
 10 model.finished    flight_agent    [trip_planner>flight_agent]
 11 message           flight_agent    [trip_planner>flight_agent] assistant
 12 tool.started      flight_agent    [trip_planner>flight_agent] search_flights flight_agent_call_1
 13 tool.finished     flight_agent    [trip_planner>flight_agent] search_flights flight_agent_call_1
 14 message           flight_agent    [trip_planner>flight_agent] tool
 15 model.started     flight_agent    [trip_planner>flight_agent]
 16 model.finished    flight_agent    [trip_planner>flight_agent]
 17 message           flight_agent    [trip_planner>flight_agent] assistant
 18 agent.finished    flight_agent    [trip_planner>flight_agent]
 19 agenttool.exited  trip_planner    [trip_planner] trip_planner -> flight_agent trip_planner_call_1 inner events: callbacks
 20 tool.finished     trip_planner    [trip_planner] flight_agent trip_planner_call_1
 21 message           trip_planner    [trip_planner] tool
 22 model.started     trip_planner    [trip_planner]
 23 model.finished    trip_planner    [trip_planner]
 24 message           trip_planner    [trip_planner] assistant
 25 tool.started      trip_planner    [trip_planner] hotel_agent trip_planner_call_2
 26 agenttool.entered trip_planner    [trip_planner] trip_planner -> hotel_agent trip_planner_call_2
 27 agent.started     hotel_agent     [trip_planner>hotel_agent] via agenttool
 28 model.started     hotel_agent     [trip_planner>hotel_agent]
 29 model.finished    hotel_agent     [trip_planner>hotel_agent]
 30 message           hotel_agent     [trip_planner>hotel_agent] assistant
 31 tool.started      hotel_agent     [trip_planner>hotel_agent] search_hotels hotel_agent_call_1
 32 tool.finished     hotel_agent     [trip_planner>hotel_agent] search_hotels hotel_agent_call_1
 33 message           hotel_agent     [trip_planner>hotel_agent] tool
 34 model.started     hotel_agent     [trip_planner>hotel_agent]
 35 model.finished    hotel_agent     [trip_planner>hotel_agent]
 36 message           hotel_agent     [trip_planner>hotel_agent] assistant
 37 agent.finished    hotel_agent     [trip_planner>hotel_agent]
 38 agenttool.exited  trip_planner    [trip_planner] trip_planner -> hotel_agent trip_planner_call_2 inner events: callbacks
 39 tool.finished     trip_planner    [trip_planner] hotel_agent trip_planner_call_2
 40 message           trip_planner    [trip_planner] tool
 41 model.started     trip_planner    [trip_planner]
 42 model.finished    trip_planner    [trip_planner]
 43 message           trip_planner    [trip_planner] assistant
 44 agent.finished    trip_planner    [trip_planner]
 45 run.finished                      [] completed
