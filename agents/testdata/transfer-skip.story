  1 run.started                       [] running
  2 agent.started     reception       [reception] via run
  3 model.started     reception       [reception]
  4 model.finished    reception       [reception]
  5 message           reception       [reception] assistant
  6 tool.started      reception       [reception] find_booking reception_call_1
  7 tool.finished     reception       [reception] find_booking reception_call_1
  8 message           reception       [reception] tool
  9 model.started     reception       [reception]
 10 model.finished    reception       [reception]
 11 message           reception       [reception] assistant
 12 tool.started      reception       [reception] transfer_to_agent reception_call_2
 13 tool.finished     reception       [reception] transfer_to_agent reception_call_2
 14 message           reception       [reception] tool
 15 transfer          reception       [reception] reception -> housekeeping (llm)
 16 agent.finished    reception       [reception]
 17 agent.started     housekeeping    [reception>housekeeping] via transfer
 18 model.started     housekeeping    [reception>housekeeping]
 19 model.finished    housekeeping    [reception>housekeeping]
 20 message           housekeeping    [reception>housekeeping] assistant
 21 tool.started      housekeeping    [reception>housekeeping] schedule_cleaning housekeeping_call_1
 22 tool.finished     housekeeping    [reception>housekeeping] schedule_cleaning housekeeping_call_1
 23 message           housekeeping    [reception>housekeeping] tool
 24 model.started     housekeeping    [reception>housekeeping]
 25 model.finished    housekeeping    [reception>housekeeping]
 26 message           housekeeping    [reception>housekeeping] assistant
 27 agent.finished    housekeeping    [reception>housekeeping]
 28 run.finished                      [] completed
