  1 run.started                       [] running
  2 agent.started     plan_execute_replan [plan_execute_replan] via run
  3 agent.started     planner         [plan_execute_replan>planner] via workflow
  4 session.set       planner         [plan_execute_replan>planner] UserInput set by planner
  5 model.started     planner         [plan_execute_replan>planner]
  6 model.finished    planner         [plan_execute_replan>planner]
  7 message           planner         [plan_execute_replan>planner] assistant
  8 message           planner         [plan_execute_replan>planner] assistant
  9 session.set       planner         [plan_execute_replan>planner] Plan set by planner
 10 agent.finished    planner         [plan_execute_replan>planner]
 11 agent.started     execute_replan  [plan_execute_replan>planner>execute_replan] via workflow
 12 agent.started     executor        [plan_execute_replan>planner>execute_replan>executor] via workflow
 13 model.started     executor        [plan_execute_replan>planner>execute_replan>executor]
 14 model.finished    executor        [plan_execute_replan>planner>execute_replan>executor]
 15 message           executor        [plan_execute_replan>planner>execute_replan>executor] assistant
 16 tool.started      executor        [plan_execute_replan>planner>execute_replan>executor] search_flights executor_call_1
 17 tool.finished     executor        [plan_execute_replan>planner>execute_replan>executor] search_flights executor_call_1
 18 message           executor        [plan_execute_replan>planner>execute_replan>executor] tool
 19 model.started     executor        [plan_execute_replan>planner>execute_replan>executor]
 20 model.finished    executor        [plan_execute_replan>planner>execute_replan>executor]
 21 message           executor        [plan_execute_replan>planner>execute_replan>executor] assistant
 22 session.set       executor        [plan_execute_replan>planner>execute_replan>executor] ExecutedStep set by executor
 23 agent.finished    executor        [plan_execute_replan>planner>execute_replan>executor]
 24 agent.started     replanner       [plan_execute_replan>planner>execute_replan>executor>replanner] via workflow
 25 session.set       replanner       [plan_execute_replan>planner>execute_replan>executor>replanner] ExecutedSteps set by replanner
 26 model.started     replanner       [plan_execute_replan>planner>execute_replan>executor>replanner]
 27 model.finished    replanner       [plan_execute_replan>planner>execute_replan>executor>replanner]
 28 message           replanner       [plan_execute_replan>planner>execute_replan>executor>replanner] assistant
 29 message           replanner       [plan_execute_replan>planner>execute_replan>executor>replanner] assistant
 30 session.set       replanner       [plan_execute_replan>planner>execute_replan>executor>replanner] Plan set by replanner
 31 agent.finished    replanner       [plan_execute_replan>planner>execute_replan>executor>replanner]
 32 agent.started     executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor] via workflow
 33 model.started     executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor]
 34 model.finished    executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor]
 35 message           executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor] assistant
 36 tool.started      executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor] convert_currency executor_call_2
 37 tool.finished     executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor] convert_currency executor_call_2
 38 message           executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor] tool
 39 model.started     executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor]
 40 model.finished    executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor]
 41 message           executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor] assistant
 42 session.set       executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor] ExecutedStep set by executor
 43 agent.finished    executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor]
 44 agent.started     replanner       [plan_execute_replan>planner>execute_replan>executor>replanner>executor>replanner] via workflow
 45 session.set       replanner       [plan_execute_replan>planner>execute_replan>executor>replanner>executor>replanner] ExecutedSteps set by replanner
 46 model.started     replanner       [plan_execute_replan>planner>execute_replan>executor>replanner>executor>replanner]
 47 model.finished    replanner       [plan_execute_replan>planner>execute_replan>executor>replanner>executor>replanner]
 48 message           replanner       [plan_execute_replan>planner>execute_replan>executor>replanner>executor>replanner] assistant
 49 message           replanner       [plan_execute_replan>planner>execute_replan>executor>replanner>executor>replanner] assistant
 50 breakloop         replanner       [plan_execute_replan>planner>execute_replan>executor>replanner>executor>replanner]
 51 agent.finished    replanner       [plan_execute_replan>planner>execute_replan>executor>replanner>executor>replanner]
 52 agent.finished    execute_replan  [plan_execute_replan>planner>execute_replan]
 53 agent.finished    plan_execute_replan [plan_execute_replan]
 54 run.finished                      [] completed
