  1 run.started                       [] running
  2 agent.started     collector       [collector] via run
  3 model.started     collector       [collector]
  4 model.finished    collector       [collector]
  5 message           collector       [collector] assistant
  6 tool.started      collector       [collector] list_merged_prs collector_call_1
  7 tool.finished     collector       [collector] list_merged_prs collector_call_1
  8 message           collector       [collector] tool
  9 model.started     collector       [collector]
 10 model.finished    collector       [collector]
 11 message           collector       [collector] assistant
 12 message           collector       [collector] assistant
 13 message           collector       [collector] tool
 14 session.set       collector       [collector] changes set by collector
 15 transfer          collector       [collector] collector -> writer (deterministic)
 16 agent.finished    collector       [collector]
 17 agent.started     writer          [collector>writer] via transfer
 18 model.started     writer          [collector>writer]
 19 model.finished    writer          [collector>writer]
 20 message           writer          [collector>writer] assistant
 21 message           writer          [collector>writer] assistant
 22 message           writer          [collector>writer] tool
 23 session.set       writer          [collector>writer] draft set by writer
 24 transfer          writer          [collector>writer] writer -> editor (deterministic)
 25 agent.finished    writer          [collector>writer]
 26 agent.started     editor          [collector>writer>editor>editor] via transfer
 27 model.started     editor          [collector>writer>editor>editor]
 28 model.finished    editor          [collector>writer>editor>editor]
 29 message           editor          [collector>writer>editor>editor] assistant
 30 tool.started      editor          [collector>writer>editor>editor] transfer_to_agent editor_call_1
 31 tool.finished     editor          [collector>writer>editor>editor] transfer_to_agent editor_call_1
 32 message           editor          [collector>writer>editor>editor] tool
 33 transfer          editor          [collector>writer>editor>editor] editor -> fact_checker (llm)
 34 agent.started     fact_checker    [collector>writer>editor>editor>fact_checker] via transfer
 35 model.started     fact_checker    [collector>writer>editor>editor>fact_checker]
 36 model.finished    fact_checker    [collector>writer>editor>editor>fact_checker]
 37 message           fact_checker    [collector>writer>editor>editor>fact_checker] assistant
 38 tool.started      fact_checker    [collector>writer>editor>editor>fact_checker] verify_prs fact_checker_call_1
 39 tool.finished     fact_checker    [collector>writer>editor>editor>fact_checker] verify_prs fact_checker_call_1
 40 session.set       fact_checker    [collector>writer>editor>editor>fact_checker] verified_changes set by fact_checker
 41 message           fact_checker    [collector>writer>editor>editor>fact_checker] tool
 42 model.started     fact_checker    [collector>writer>editor>editor>fact_checker]
 43 model.finished    fact_checker    [collector>writer>editor>editor>fact_checker]
 44 message           fact_checker    [collector>writer>editor>editor>fact_checker] assistant
 45 tool.started      fact_checker    [collector>writer>editor>editor>fact_checker] transfer_to_agent fact_checker_call_2
 46 tool.finished     fact_checker    [collector>writer>editor>editor>fact_checker] transfer_to_agent fact_checker_call_2
 47 message           fact_checker    [collector>writer>editor>editor>fact_checker] tool
 48 transfer          fact_checker    [collector>writer>editor>editor>fact_checker] fact_checker -> editor (llm)
 49 agent.finished    fact_checker    [collector>writer>editor>editor>fact_checker]
 50 agent.started     editor          [collector>writer>editor>editor>fact_checker>editor] via transfer
 51 model.started     editor          [collector>writer>editor>editor>fact_checker>editor]
 52 model.finished    editor          [collector>writer>editor>editor>fact_checker>editor]
 53 message           editor          [collector>writer>editor>editor>fact_checker>editor] assistant
 54 tool.started      editor          [collector>writer>editor>editor>fact_checker>editor] publish_notes editor_call_2
 55 tool.finished     editor          [collector>writer>editor>editor>fact_checker>editor] publish_notes editor_call_2
 56 message           editor          [collector>writer>editor>editor>fact_checker>editor] tool
 57 model.started     editor          [collector>writer>editor>editor>fact_checker>editor]
 58 model.finished    editor          [collector>writer>editor>editor>fact_checker>editor]
 59 message           editor          [collector>writer>editor>editor>fact_checker>editor] assistant
 60 agent.finished    editor          [collector>writer>editor>editor>fact_checker>editor]
 61 agent.finished    editor          [collector>writer>editor>editor]
 62 run.finished                      [] completed
