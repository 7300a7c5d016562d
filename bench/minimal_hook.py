"""The floor under a hook: read the agent CLI's event from stdin, parse it, answer, exit 0.

Run as ``python -I -S``: no site (no editable install's finder, no .pth files), nothing imported
beyond ``json``. Any guard written in Python starts an interpreter and reads the event at least.
"""

import json
import sys

event = json.loads(sys.stdin.buffer.read())
sys.stdout.write(json.dumps({"seen": event.get("hook_event_name", "")}) + "\n")
