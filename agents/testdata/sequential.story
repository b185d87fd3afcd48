  1 run.started                       [] running
  2 agent.started     seq             [seq] via run
  3 agent.started     planner         [seq>planner] via workflow
  4 model.started     planner         [seq>planner]
  5 model.finished    planner         [seq>planner]
  6 message           planner         [seq>planner] assistant
  7 agent.finished    planner         [seq>planner]
  8 agent.started     writer          [seq>planner>writer] via workflow
  9 model.started     writer          [seq>planner>writer]
 10 model.finished    writer          [seq>planner>writer]
 11 message           writer          [seq>planner>writer] assistant
 12 agent.finished    writer          [seq>planner>writer]
 13 agent.finished    seq             [seq]
 14 run.finished                      [] completed
