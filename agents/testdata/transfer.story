  1 run.started                       [] running
  2 agent.started     router          [router] via run
  3 model.started     router          [router]
  4 model.finished    router          [router]
  5 message           router          [router] assistant
  6 tool.started      router          [router] transfer_to_agent router_call_1
  7 tool.finished     router          [router] transfer_to_agent router_call_1
  8 message           router          [router] tool
  9 transfer          router          [router] router -> weather_agent (llm)
 10 agent.finished    router          [router]
 11 agent.started     weather_agent   [router>weather_agent] via transfer
 12 model.started     weather_agent   [router>weather_agent]
 13 model.finished    weather_agent   [router>weather_agent]
 14 message           weather_agent   [router>weather_agent] assistant
 15 tool.started      weather_agent   [router>weather_agent] get_weather weather_agent_call_1
 16 tool.finished     weather_agent   [router>weather_agent] get_weather weather_agent_call_1
 17 message           weather_agent   [router>weather_agent] tool
 18 model.started     weather_agent   [router>weather_agent]
 19 model.finished    weather_agent   [router>weather_agent]
 20 message           weather_agent   [router>weather_agent] assistant
 21 agent.finished    weather_agent   [router>weather_agent]
 22 run.finished                      [] completed
