  1 run.started                       [] running
  2 agent.started     launch          [launch] via run
  3 agent.started     scouting        [launch>scouting] via workflow
  4 agent.started     market_scout    [launch>scouting>market_scout] via workflow
  5 model.started     market_scout    [launch>scouting>market_scout]
  6 model.finished    market_scout    [launch>scouting>market_scout]
  7 message           market_scout    [launch>scouting>market_scout] assistant
  8 tool.started      market_scout    [launch>scouting>market_scout] search_market market_scout_call_1
  9 tool.finished     market_scout    [launch>scouting>market_scout] search_market market_scout_call_1
 10 message           market_scout    [launch>scouting>market_scout] tool
 11 model.started     market_scout    [launch>scouting>market_scout]
 12 model.finished    market_scout    [launch>scouting>market_scout]
 13 message           market_scout    [launch>scouting>market_scout] assistant
 14 agent.finished    market_scout    [launch>scouting>market_scout]
 15 agent.started     tech_scout      [launch>scouting>tech_scout] via workflow
 16 model.started     tech_scout      [launch>scouting>tech_scout]
 17 model.finished    tech_scout      [launch>scouting>tech_scout]
 18 message           tech_scout      [launch>scouting>tech_scout] assistant
 19 tool.started      tech_scout      [launch>scouting>tech_scout] read_specs tech_scout_call_1
 20 tool.finished     tech_scout      [launch>scouting>tech_scout] read_specs tech_scout_call_1
 21 message           tech_scout      [launch>scouting>tech_scout] tool
 22 model.started     tech_scout      [launch>scouting>tech_scout]
 23 model.finished    tech_scout      [launch>scouting>tech_scout]
 24 message           tech_scout      [launch>scouting>tech_scout] assistant
 25 agent.finished    tech_scout      [launch>scouting>tech_scout]
 26 agent.finished    scouting        [launch>scouting]
 27 agent.started     drafting        [launch>scouting>drafting] via workflow
 28 agent.started     copywriter      [launch>scouting>drafting>copywriter] via workflow
 29 model.started     copywriter      [launch>scouting>drafting>copywriter]
 30 model.finished    copywriter      [launch>scouting>drafting>copywriter]
 31 message           copywriter      [launch>scouting>drafting>copywriter] assistant
 32 agent.finished    copywriter      [launch>scouting>drafting>copywriter]
 33 agent.started     critic          [launch>scouting>drafting>copywriter>critic] via workflow
 34 model.started     critic          [launch>scouting>drafting>copywriter>critic]
 35 model.finished    critic          [launch>scouting>drafting>copywriter>critic]
 36 message           critic          [launch>scouting>drafting>copywriter>critic] assistant
 37 tool.started      critic          [launch>scouting>drafting>copywriter>critic] review_draft critic_call_1
 38 tool.finished     critic          [launch>scouting>drafting>copywriter>critic] review_draft critic_call_1
 39 message           critic          [launch>scouting>drafting>copywriter>critic] tool
 40 model.started     critic          [launch>scouting>drafting>copywriter>critic]
 41 model.finished    critic          [launch>scouting>drafting>copywriter>critic]
 42 message           critic          [launch>scouting>drafting>copywriter>critic] assistant
 43 agent.finished    critic          [launch>scouting>drafting>copywriter>critic]
 44 agent.started     copywriter      [launch>scouting>drafting>copywriter>critic>copywriter] via workflow
 45 model.started     copywriter      [launch>scouting>drafting>copywriter>critic>copywriter]
 46 model.finished    copywriter      [launch>scouting>drafting>copywriter>critic>copywriter]
 47 message           copywriter      [launch>scouting>drafting>copywriter>critic>copywriter] assistant
 48 agent.finished    copywriter      [launch>scouting>drafting>copywriter>critic>copywriter]
 49 agent.started     critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic] via workflow
 50 model.started     critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic]
 51 model.finished    critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic]
 52 message           critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic] assistant
 53 tool.started      critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic] review_draft critic_call_2
 54 tool.finished     critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic] review_draft critic_call_2
 55 message           critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic] tool
 56 model.started     critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic]
 57 model.finished    critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic]
 58 message           critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic] assistant
 59 agent.finished    critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic]
 60 agent.started     copywriter      [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter] via workflow
 61 model.started     copywriter      [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter]
 62 model.finished    copywriter      [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter]
 63 message           copywriter      [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter] assistant
 64 agent.finished    copywriter      [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter]
 65 agent.started     critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter>critic] via workflow
 66 model.started     critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter>critic]
 67 model.finished    critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter>critic]
 68 message           critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter>critic] assistant
 69 tool.started      critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter>critic] review_draft critic_call_3
 70 tool.finished     critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter>critic] review_draft critic_call_3
 71 message           critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter>critic] tool
 72 model.started     critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter>critic]
 73 model.finished    critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter>critic]
 74 message           critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter>critic] assistant
 75 tool.started      critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter>critic] approve_draft critic_call_4
 76 tool.finished     critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter>critic] approve_draft critic_call_4
 77 session.set       critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter>critic] approved_draft set by critic
 78 message           critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter>critic] tool
 79 breakloop         critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter>critic]
 80 agent.finished    critic          [launch>scouting>drafting>copywriter>critic>copywriter>critic>copywriter>critic]
 81 agent.finished    drafting        [launch>scouting>drafting]
 82 agent.started     announcer       [launch>scouting>drafting>announcer] via workflow
 83 model.started     announcer       [launch>scouting>drafting>announcer]
 84 model.finished    announcer       [launch>scouting>drafting>announcer]
 85 message           announcer       [launch>scouting>drafting>announcer] assistant
 86 agent.finished    announcer       [launch>scouting>drafting>announcer]
 87 agent.finished    launch          [launch]
 88 run.finished                      [] completed
