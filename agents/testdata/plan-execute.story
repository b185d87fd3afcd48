  1 run.started                       [] running
  2 agent.started     plan_execute_replan [plan_execute_replan] via run
  3 agent.started     planner         [plan_execute_replan>planner] via workflow
  4 session.set       planner         [plan_execute_replan>planner] UserInput set by planner
  5 model.started     planner         [plan_execute_replan>planner]
  6 model.finished    planner         [plan_execute_replan>planner]
  7 message           planner         [plan_execute_replan>planner] assistant
  8 session.set       planner         [plan_execute_replan>planner] Plan set by planner
  9 agent.finished    planner         [plan_execute_replan>planner]
 10 agent.started     execute_replan  [plan_execute_replan>planner>execute_replan] via workflow
 11 agent.started     executor        [plan_execute_replan>planner>execute_replan>executor] via workflow
 12 model.started     executor        [plan_execute_replan>planner>execute_replan>executor]
 13 model.finished    executor        [plan_execute_replan>planner>execute_replan>executor]
 14 message           executor        [plan_execute_replan>planner>execute_replan>executor] assistant
 15 tool.started      executor        [plan_execute_replan>planner>execute_replan>executor] search_flights executor_call_1
 16 tool.finished     executor        [plan_execute_replan>planner>execute_replan>executor] search_flights executor_call_1
 17 message           executor        [plan_execute_replan>planner>execute_replan>executor] tool
 18 model.started     executor        [plan_execute_replan>planner>execute_replan>executor]
 19 model.finished    executor        [plan_execute_replan>planner>execute_replan>executor]
 20 message           executor        [plan_execute_replan>planner>execute_replan>executor] assistant
 21 session.set       executor        [plan_execute_replan>planner>execute_replan>executor] ExecutedStep set by executor
 22 agent.finished    executor        [plan_execute_replan>planner>execute_replan>executor]
 23 agent.started     replanner       [plan_execute_replan>planner>execute_replan>executor>replanner] via workflow
 24 session.set       replanner       [plan_execute_replan>planner>execute_replan>executor>replanner] ExecutedSteps set by replanner
 25 model.started     replanner       [plan_execute_replan>planner>execute_replan>executor>replanner]
 26 model.finished    replanner       [plan_execute_replan>planner>execute_replan>executor>replanner]
 27 message           replanner       [plan_execute_replan>planner>execute_replan>executor>replanner] assistant
 28 session.set       replanner       [plan_execute_replan>planner>execute_replan>executor>replanner] Plan set by replanner
 29 agent.finished    replanner       [plan_execute_replan>planner>execute_replan>executor>replanner]
 30 agent.started     executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor] via workflow
 31 model.started     executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor]
 32 model.finished    executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor]
 33 message           executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor] assistant
 34 tool.started      executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor] convert_currency executor_call_2
 35 tool.finished     executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor] convert_currency executor_call_2
 36 message           executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor] tool
 37 model.started     executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor]
 38 model.finished    executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor]
 39 message           executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor] assistant
 40 session.set       executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor] ExecutedStep set by executor
 41 agent.finished    executor        [plan_execute_replan>planner>execute_replan>executor>replanner>executor]
 42 agent.started     replanner       [plan_execute_replan>planner>execute_replan>executor>replanner>executor>replanner] via workflow
 43 session.set       replanner       [plan_execute_replan>planner>execute_replan>executor>replanner>executor>replanner] ExecutedSteps set by replanner
 44 model.started     replanner       [plan_execute_replan>planner>execute_replan>executor>replanner>executor>replanner]
 45 model.finished    replanner       [plan_execute_replan>planner>execute_replan>executor>replanner>executor>replanner]
 46 message           replanner       [plan_execute_replan>planner>execute_replan>executor>replanner>executor>replanner] assistant
 47 breakloop         replanner       [plan_execute_replan>planner>execute_replan>executor>replanner>executor>replanner]
 48 agent.finished    replanner       [plan_execute_replan>planner>execute_replan>executor>replanner>executor>replanner]
 49 agent.finished    execute_replan  [plan_execute_replan>planner>execute_replan]
 50 agent.finished    plan_execute_replan [plan_execute_replan]
 51 run.finished                      [] completed
