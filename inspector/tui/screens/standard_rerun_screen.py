"""The re-run of a standard processor's model calls (the context screen's `R` on one).

The endpoint form is the forked re-run's (`RerunDialog`); this screen runs the processor's
script (`core.standard.rerun_script`) through `llm.standard_runner` in a worker, lists each
request as it comes back, then shows the outcome, the tokens before and after, the saving
and the context after, and says whose prompt was used (ours unless a prompt file is given).
The worker only posts messages; the screen owns the state.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from typing import Any

import httpx
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message as TextualMessage
from textual.widgets import Footer, Static
from textual.worker import Worker, WorkerState

from inspector.core.artifact import Artifact
from inspector.core.redact import Masker, escape_controls
from inspector.core.standard.prepared import StandardPrepared
from inspector.core.strategy.base import Prepared, ScriptRerun, Settings, Strategy, rerun_of
from inspector.llm.standard_runner import (
    CallRecord,
    StandardHooks,
    StandardRerunResult,
    prompt_label,
    release_sampling,
    rerun_standard,
    standard_prompts,
)
from inspector.tui.screens.base import ThemedScreen
from inspector.tui.screens.rerun_dialog import RerunDialog, RerunRequest


class StandardRerunScreen(ThemedScreen[None]):
    """One standard re-run: each request as it returns, then the context after."""

    DEFAULT_CSS = """
    StandardRerunScreen #std-title { height: auto; background: $panel; padding: 0 1; }
    StandardRerunScreen #std-calls { height: auto; color: $text-muted; padding: 0 1; }
    StandardRerunScreen #std-result { height: auto; padding: 0 1; }
    """
    BINDINGS = [Binding("escape", "close", "Back", tooltip="Close the re-run")]

    class CallMade(TextualMessage):
        """A request came back (or failed)."""

        def __init__(self, record: CallRecord) -> None:
            super().__init__()
            self.record = record

    class RunFinished(TextualMessage):
        """The processor ended."""

        def __init__(self, result: StandardRerunResult) -> None:
            super().__init__()
            self.result = result

    def __init__(
        self,
        strategy: Strategy,
        prepared: StandardPrepared,
        settings: Settings,
        request: RerunRequest,
        *,
        env: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__()
        self.strategy = strategy
        #: The context under the settings' release (counts and sampling follow it).
        self.prepared = prepared.for_release(getattr(settings, "openjiuwen_version", None))
        self.settings = settings
        self.request = request
        self.env: Mapping[str, str] = os.environ if env is None else env
        self.transport = transport
        self.calls: list[CallRecord] = []
        self.result: StandardRerunResult | None = None
        self.error_message: str | None = None
        given = None
        if request.prompt_choice == "file" and request.prompt_file:
            with open(request.prompt_file, encoding="utf-8") as handle:
                given = handle.read()
        custom = getattr(settings, "custom_compression_prompt", None)
        self.prompts = standard_prompts(strategy.processor, given, custom)

    def compose(self) -> ComposeResult:
        """Title, the requests, the result."""
        yield Static(id="std-title", markup=False)
        with VerticalScroll():
            yield Static(id="std-calls", markup=False)
            yield Static(id="std-result", markup=False)
        yield Footer()

    @property
    def calls_running(self) -> bool:
        """A model call is under way (the app asks before quitting)."""
        return any(w.group == "standard-rerun" and w.is_running for w in self.workers)

    def on_mount(self) -> None:
        """Show the title and start the run."""
        self.query_one("#std-title", Static).update(
            f"re-run {self.strategy.processor} (openJiuwen {self.prepared.release} rules) "
            f"against {self.request.base_url}, model {self.request.model}; prompt: "
            f"{prompt_label(self.prompts)}"
        )
        self.run_script()

    @work(exclusive=True, group="standard-rerun", exit_on_error=False)
    async def run_script(self) -> None:
        """Send the processor's calls; post each request and the result."""
        rerun = rerun_of(self.strategy)
        assert isinstance(rerun, ScriptRerun)
        script = rerun.script(self.prepared, self.settings, self.prompts, lambda: uuid.uuid4().hex)
        release = release_sampling(self.prepared.release)
        result = await rerun_standard(
            self.prepared,
            script,
            self.request.endpoint(release),
            processor=self.strategy.processor,
            prompt_source=self.prompts.source,
            hooks=StandardHooks(
                transport=self.transport,
                env=self.env,
                on_call=lambda record: self.post_message(self.CallMade(record)),
            ),
        )
        self.post_message(self.RunFinished(result))

    @on(CallMade)
    def _call_made(self, event: CallMade) -> None:
        self.calls.append(event.record)
        lines = []
        for record in self.calls:
            what = (
                f"HTTP {record.status}"
                if record.failure is None
                else (
                    f"HTTP {record.failure.status_code}"
                    if record.failure.status_code
                    else record.failure.transport
                )
            )
            lines.append(f"{record.stage} (try {record.try_number}): {what}")
        self.query_one("#std-calls", Static).update("\n".join(lines))

    @on(RunFinished)
    def _run_finished(self, event: RunFinished) -> None:
        self.result = result = event.result
        end = result.end
        lines = [
            f"outcome: {end.state}: {end.reason}",
            f"tokens {result.tokens_before} -> {result.tokens_after} (saves {result.saving}, "
            f"{result.saving_ratio:.1%}); messages {result.messages_before} -> {len(end.messages)}",
            *(f"approximated: {note}" for note in end.approximations),
            "",
            "context after:",
        ]
        for index, message in enumerate(end.messages):
            text = message.content if isinstance(message.content, str) else str(message.content)
            first = text.splitlines()[0] if text else ""
            mark = "*" if any(index == i for i in end.modified) else " "
            lines.append(f"{mark}[{index}] {message.role}: {first[:120]}")
        masker = Masker(secrets=(self.env.get(self.request.api_key_env) or "",))
        self.query_one("#std-result", Static).update(escape_controls(masker.text("\n".join(lines))))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker error becomes a plain sentence on screen, never a traceback."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            error = event.worker.error
            self.error_message = f"{type(error).__name__}: {error}"
            self.query_one("#std-result", Static).update(f"the re-run failed: {self.error_message}")

    def action_close(self) -> None:
        """Back to the context."""
        self.dismiss(None)


def open_standard_rerun(
    app: App[Any],
    strategy: Strategy,
    prepared: Prepared,
    settings: Settings,
    artifact: Artifact,
    *,
    env: Mapping[str, str] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> None:
    """The endpoint form, then the standard re-run screen on submit."""
    assert isinstance(prepared, StandardPrepared)

    def submitted(request: RerunRequest | None) -> None:
        if request is not None:
            app.push_screen(
                StandardRerunScreen(
                    strategy, prepared, settings, request, env=env, transport=transport
                )
            )

    app.push_screen(RerunDialog(artifact, env=env), submitted)
