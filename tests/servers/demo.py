"""A local jiuwenswarm stand-in replaying the sample payloads, for trying the live views.

    python -m tests.servers.demo [--port 19000] [--every 2.0]

Starts the fake gateway on ws://127.0.0.1:PORT/ws and the fake trajectory API on
http://127.0.0.1:PORT+2 (as jiuwenswarm lays them out), then loops: a compression operation
(started, completed), a usage update, and a new context-window commit announced by
`trace.updated` on session `retention-single`. Then, in another terminal:

    inspector watch 'ws://127.0.0.1:19000/ws?session_id=retention-single' --trajectory auto

Stop with Ctrl-C. Listens on 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import itertools
import time

from tests.servers.fake_gateway import FakeGateway, sample_frame
from tests.servers.fake_trajectory import SESSION, FakeTrajectory


def main() -> int:
    """Run the demo servers until interrupted."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--port", type=int, default=19000)
    parser.add_argument("--every", type=float, default=2.0, help="seconds between steps")
    args = parser.parse_args()
    gateway = FakeGateway(port=args.port).start()
    trajectory = FakeTrajectory()
    trajectory.port = args.port + 2
    trajectory.start()
    print(f"gateway    {gateway.url(SESSION)}")
    print(f"trajectory {trajectory.session_url()}")
    window = 7
    try:
        for step in itertools.count(1):
            time.sleep(args.every)
            gateway.emit_sample(SESSION, "compression_state_started")
            time.sleep(args.every / 2)
            gateway.emit_sample(SESSION, "compression_state_completed")
            gateway.emit_sample(SESSION, "context_usage")
            time.sleep(args.every / 2)
            message_id = f"demo-{step}"
            revision = trajectory.append_event(
                SESSION,
                "context.window.commit",
                {
                    "window_id": f"main:window-{window + 1}",
                    "base_window_id": f"main:window-{window}",
                    "complete": True,
                    "request_purpose": "assistant",
                    "delta": [
                        {
                            "op": "insert",
                            "message_id": message_id,
                            "index": 2 + step,
                            "message": {
                                "message_id": message_id,
                                "role": "user",
                                "origin": "external_user",
                                "content": f"Step {step}.",
                            },
                        }
                    ],
                },
                epoch="epoch-2",
                sequence=1 + step,
            )
            window += 1
            frame = sample_frame("trace_updated_final", SESSION)
            frame["payload"]["revision"] = revision
            gateway.emit(SESSION, frame)
    except KeyboardInterrupt:
        pass
    finally:
        gateway.shutdown()
        trajectory.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
