import json, sys
import numpy as np
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
acc = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0})
acc.Reload()
tags = acc.Tags()["scalars"]
want = {}
for line in open(sys.argv[2]):
    r = json.loads(line)
    if int(r["step"]) > int(sys.argv[3]) if len(sys.argv) > 3 else False:
        continue
    for k, v in r.items():
        if k != "step" and isinstance(v, (int, float)) and not isinstance(v, bool):
            want.setdefault(k, []).append((r["step"], np.float32(v)))
got = {t: [(e.step, np.float32(e.value)) for e in acc.Scalars(t)] for t in tags}
assert sorted(got) == sorted(want), (sorted(got), sorted(want))
for t in want:
    assert got[t] == want[t], (t, got[t][:3], want[t][:3])
print(len(tags), "tags,", sum(map(len, want.values())), "scalars equal")
