"""The re-run screen: the compaction call in a worker, its progress, then before and after.

`open_rerun(app, artifact, tuning)` is the one entry point: it shows the form
(`RerunDialog`) and, on submit, pushes `RerunScreen`. The screen owns every piece of state
(attempts so far, the result, what was written); its workers only call
`rerun_compaction` / `write_rerun` and post messages. Errors become plain sentences on
screen (never a traceback) and the API key is never shown: any text that could echo it is
redacted.

The run has its own event loop in a thread (counting a big context never freezes the
screen); the status line says the step in hand (preparing, waiting for attempt N, waiting
before a retry, judging the reply), the elapsed time and the attempts so far. Esc cancels
the run's task in that loop, which closes the HTTP request at once: no retry follows, no
result is kept and the context view is left as it was. Renderables come from `inspector.render.rerun_report` and
`inspector.render.rerun_view`.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import httpx
from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message as TextualMessage
from textual.timer import Timer
from textual.widgets import Footer, ProgressBar, Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from inspector.core.artifact import Artifact
from inspector.core.compaction import COMPACTING_PROCESSORS
from inspector.core.errors import ConfigError, InspectorError
from inspector.core.rerun import Attempt, RerunResult, explain_outcome
from inspector.core.tokens import TokenCounter
from inspector.core.tuning import Tuning
from inspector.llm import (
    MissingApiKey,
    NothingToCompress,
    OutputDirError,
    RerunHooks,
    RerunOptions,
    WrittenFiles,
    rerun_compaction,
    rerun_inputs,
    write_rerun,
)
from inspector.render.rerun_report import before_after_table
from inspector.render.rerun_view import (
    after_renderable,
    before_renderable,
    findings_renderable,
    lost_renderable,
    tokens_line,
)
from inspector.tui.screens.base import ThemedScreen
from inspector.tui.screens.rerun_dialog import RerunDialog, RerunRequest

RunState = Literal["running", "done", "cancelled", "error"]

_OUTCOME_WORDS: dict[str, tuple[str, str]] = {
    "applied": ("COMPRESSED", "verdict.hit bold"),
    "no_benefit": ("NO BENEFIT", "caution bold"),
    "empty_summary": ("NO SUMMARY", "caution bold"),
    "failed": ("MODEL CALL FAILED", "verdict.miss bold"),
}


def plain_error(error: BaseException, *, writing: bool = False) -> str:
    """What stopped a run (or the writing of its dump), in one or two plain sentences."""
    if isinstance(error, MissingApiKey):
        return (
            f"The environment variable {error.variable} is not set, so there is no API key to send. "
            "Export it and restart the inspector, or press e to name another variable "
            "(or turn 'send a key' off for a local server)."
        )
    if isinstance(error, NothingToCompress):
        return f"{str(error)[:1].upper()}{str(error)[1:]}. No model call was made."
    if isinstance(error, ConfigError):
        return f"{error}. The re-run supports openJiuwen's LLM compressors only."
    if isinstance(error, OutputDirError):
        return str(error).replace("choose another --out", "choose another folder (press e)")
    if isinstance(error, UnicodeDecodeError):
        return "The prompt file is not UTF-8 text."
    if isinstance(error, OSError):
        where = f" {error.filename}" if error.filename else ""
        return f"Cannot {'write' if writing else 'read'}{where}: {error.strerror or error}."
    if isinstance(error, InspectorError):
        return str(error)
    if isinstance(error, httpx.HTTPError):
        return f"The HTTP call failed ({type(error).__name__}): {error}"
    return f"Unexpected error ({type(error).__name__}): {error}"


def _redact(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text


class RerunScreen(ThemedScreen[None]):
    """One re-run: progress while the call runs, then the context before and after."""

    DEFAULT_CSS = """
    RerunScreen #rerun-title { height: auto; background: $panel; padding: 0 1; }
    RerunScreen #rerun-progress-line { height: auto; padding: 0 1; }
    RerunScreen #rerun-progress { width: 24; }
    RerunScreen #rerun-status { width: 1fr; height: auto; }
    RerunScreen.-running #rerun-status { margin-left: 1; }
    RerunScreen #rerun-head { height: auto; padding: 0 1; }
    RerunScreen #rerun-attempts { height: auto; max-height: 8; color: $text-muted; }
    RerunScreen #rerun-error { height: auto; color: $text-error; display: none; }
    RerunScreen #rerun-error.-shown { display: block; }
    RerunScreen #rerun-tokens { height: auto; margin-bottom: 1; }
    RerunScreen #rerun-written { height: auto; color: $text-success; }
    RerunScreen #rerun-written.-failed { color: $text-error; }
    RerunScreen #rerun-tabs { height: 1fr; display: none; }
    RerunScreen.-has-result #rerun-tabs { display: block; }
    RerunScreen.-running #rerun-progress-line ProgressBar { display: block; }
    RerunScreen #rerun-progress-line ProgressBar { display: none; }
    RerunScreen #rerun-table { height: auto; margin-bottom: 1; }
    RerunScreen #rerun-panes { height: auto; }
    RerunScreen .rerun-pane { width: 1fr; height: auto; padding: 0 1 0 0; }
    RerunScreen #after { border-left: solid $panel; padding: 0 0 0 1; }
    RerunScreen TabPane { padding: 0; }
    RerunScreen #before-after-pane, RerunScreen #lost-pane, RerunScreen #findings-pane { padding: 0 1; }
    """

    BINDINGS = [
        Binding("escape", "cancel_run", "Cancel", tooltip="Stop the model call"),
        Binding("escape", "close", "Back", tooltip="Close the re-run"),
        Binding("ctrl+c", "cancel_run", "Cancel", show=False),
        Binding("ctrl+c", "screen.copy_text", show=False),
        Binding("w", "write_dump", "Write dump", tooltip="Write the new dump and debug records"),
        Binding("e", "edit_rerun", "Edit & re-run", tooltip="Change the form and run again"),
        Binding("b", "show_tab('tab-before-after')", "Before/after", show=False),
        Binding("l", "show_tab('tab-lost')", "Lost", show=False),
        Binding("f", "show_tab('tab-findings')", "Findings", show=False),
    ]

    class AttemptMade(TextualMessage):
        """An HTTP call of the run ended (accepted, or failed and what happened next)."""

        def __init__(self, run: int, attempt: Attempt) -> None:
            super().__init__()
            self.run = run
            self.attempt = attempt

    class StepChanged(TextualMessage):
        """The run moved on to another step (`text` says which, in plain words)."""

        def __init__(self, run: int, text: str) -> None:
            super().__init__()
            self.run = run
            self.text = text

    class RerunFinished(TextualMessage):
        """The run ended with a result (any outcome, failed calls included)."""

        def __init__(self, run: int, result: RerunResult) -> None:
            super().__init__()
            self.run = run
            self.result = result

    class DumpWritten(TextualMessage):
        """The dump (when applied) and the debug records were written."""

        def __init__(self, written: WrittenFiles) -> None:
            super().__init__()
            self.written = written

    def __init__(
        self,
        artifact: Artifact,
        tuning: Tuning,
        request: RerunRequest,
        *,
        counters: Mapping[str, TokenCounter] | None = None,
        env: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__()
        self.artifact = artifact
        self.tuning = tuning
        self.request = request
        self.counters = counters
        self.env: Mapping[str, str] = os.environ if env is None else env
        self.transport = transport
        self.state: RunState = "running"
        self.run_number = 0
        self.attempts: list[Attempt] = []
        self.result: RerunResult | None = None
        self.error_message: str | None = None
        self.written: WrittenFiles | None = None
        self.write_error: str | None = None
        self.started = 0.0
        self.elapsed = 0.0
        self._worker: Worker[None] | None = None
        self._ticker: Timer | None = None
        #: The step in hand while running (see `StepChanged`), and every step of this run.
        self.step = ""
        self.steps: list[str] = []
        #: The event loop of the running run (its thread's), to cancel its task.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_lock = threading.Lock()

    # --- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """Title, progress and attempts, error, tokens, then the before/after tabs."""
        yield Static(id="rerun-title", markup=False)
        with Horizontal(id="rerun-progress-line"):
            yield ProgressBar(
                total=None, show_eta=False, show_percentage=False, id="rerun-progress"
            )
            yield Static(id="rerun-status", markup=False)
        with Vertical(id="rerun-head"):
            yield Static(id="rerun-attempts", markup=False)
            yield Static(id="rerun-error", markup=False)
            yield Static(id="rerun-written", markup=False)
        with TabbedContent(id="rerun-tabs", initial="tab-before-after"):
            with (
                TabPane("Before → after", id="tab-before-after"),
                VerticalScroll(id="before-after-pane"),
            ):
                yield Static(id="rerun-tokens", markup=False)
                yield Static(id="rerun-table", markup=False)
                with Horizontal(id="rerun-panes"):
                    yield Static(id="before", classes="rerun-pane", markup=False)
                    yield Static(id="after", classes="rerun-pane", markup=False)
            with TabPane("What the summary lost", id="tab-lost"), VerticalScroll(id="lost-pane"):
                yield Static(id="lost", markup=False)
            with (
                TabPane("Findings & attempts", id="tab-findings"),
                VerticalScroll(id="findings-pane"),
            ):
                yield Static(id="findings", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        """Start the run."""
        self.start_run()

    @property
    def calls_running(self) -> bool:
        """A model call is under way (the app asks before quitting)."""
        return self.state == "running"

    def on_unmount(self) -> None:
        """Leaving (or quitting) stops a run still going."""
        self._cancel_loop()

    # --- state ---------------------------------------------------------------------------

    def _secret(self) -> str | None:
        return self.env.get(self.request.api_key_env) or None

    def start_run(self) -> None:
        """Reset the state and start a run of the current request."""
        self.run_number += 1
        self.state = "running"
        self.attempts = []
        self.result = None
        self.error_message = None
        self.written = None
        self.write_error = None
        self.started = time.monotonic()
        self.elapsed = 0.0
        self.step = "preparing the request"
        self.steps = []
        if self._ticker is not None:
            self._ticker.stop()
        self._ticker = self.set_interval(0.2, self._tick)
        self._cancel_loop()  # a run still going (a new one replaces it)
        self._worker = self.run_rerun(self.run_number, self.request)
        self._refresh_all()

    def _tick(self) -> None:
        if self.state == "running":
            self.elapsed = time.monotonic() - self.started
            self._show_status()

    def _finish(self, state: RunState) -> None:
        self.state = state
        self.elapsed = time.monotonic() - self.started
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        self._refresh_all()

    def _refresh_all(self) -> None:
        self.set_class(self.state == "running", "-running")
        self.set_class(self.result is not None, "-has-result")
        self._show_title()
        self._show_status()
        self._show_attempts()
        error = self.query_one("#rerun-error", Static)
        error.update(self.error_message or "")
        error.set_class(bool(self.error_message), "-shown")
        self._show_result()
        self._show_written()
        self.refresh_bindings()

    def restyle(self) -> None:
        """The theme changed: redraw everything."""
        self._refresh_all()

    def _show_title(self) -> None:
        r = self.request
        prompt = {
            "recorded": "recorded prompt",
            "builtin": "built-in prompt",
            "file": f"prompt file {r.prompt_file}",
        }[r.prompt_choice]
        key = r.api_key_env if r.send_key else "no key"
        head = Text.assemble(
            ("Re-run ", "bold"),
            (self.tuning.processor_class, self.palette("name")),
            f" · {self.artifact.kind} {self.artifact.id}",
            (f" · {self.artifact.source}", "dim"),
            no_wrap=True,
            overflow="ellipsis",
        )
        settings = Text(
            f"{r.model} at {r.base_url} · key {key} · {prompt} · tools "
            f"{'offered' if r.include_tools else 'left out'} · retry {r.policy} · context_max "
            f"{self.tuning.context_max}, keep_recent {self.tuning.keep_recent}, {self.tuning.token_mode}",
            style="dim",
            no_wrap=True,
            overflow="ellipsis",
        )
        title = Group(head, settings)
        self.query_one("#rerun-title", Static).update(title)

    def status_text(self) -> Text:
        """The one status line: running, the outcome, cancelled, or could not run."""
        if self.state == "running":
            calls = f" · {len(self.attempts)} call(s) done" if self.attempts else ""
            retries = sum(1 for a in self.attempts if a.action in ("backoff", "shrink"))
            if retries:
                calls += f", {retries} retr{'y' if retries == 1 else 'ies'}"
            return Text(
                f"calling {self.request.model} ... {self.elapsed:.1f} s{calls} · {self.step}"
                "   (Esc to cancel)",
                style="bold",
            )
        if self.state == "cancelled":
            return Text(
                f"cancelled after {self.elapsed:.1f} s: no result, the context is unchanged "
                "(e to edit and run again, Esc to go back)",
                style=self.palette("caution", "bold"),
            )
        if self.state == "error":
            return Text(
                "could not run (e to edit the form, Esc to go back)", style=self.palette("error")
            )
        assert self.result is not None
        word, style = _OUTCOME_WORDS[self.result.outcome]
        text = Text.assemble((word, self.palette(style)), "  ", explain_outcome(self.result))
        if self.request.prompt_choice == "recorded" and self.result.prompt_source != "recorded":
            text.append(
                "  (the dump holds no prompt: the built-in one was used)",
                style=self.palette("caution"),
            )
        return Text(_redact(text.plain, self._secret()), spans=text.spans)

    def _show_status(self) -> None:
        self.query_one("#rerun-status", Static).update(self.status_text())

    def _show_attempts(self) -> None:
        secret = self._secret()
        lines = [_redact(a.describe(), secret) for a in self.attempts]
        self.query_one("#rerun-attempts", Static).update("\n".join(lines))

    def _show_result(self) -> None:
        result = self.result
        tokens = self.query_one("#rerun-tokens", Static)
        if result is None:
            tokens.update("")
            return
        styles = self.palette
        tokens.update(tokens_line(result, styles))
        table = self.query_one("#rerun-table", Static)
        table.display = result.compaction is not None
        if result.compaction is not None:
            table.update(before_after_table(result, styles))
        self.query_one("#before", Static).update(before_renderable(result, styles))
        self.query_one("#after", Static).update(after_renderable(result, styles))
        self.query_one("#lost", Static).update(lost_renderable(result, styles))
        self.query_one("#findings", Static).update(findings_renderable(result, styles))
        lost = sum(1 for item in result.losses if not item.restored)
        tabs = self.query_one("#rerun-tabs", TabbedContent)
        tabs.get_tab("tab-lost").label = f"What the summary lost ({lost})"  # type: ignore[assignment]
        tabs.get_tab("tab-findings").label = f"Findings & attempts ({len(result.findings)})"  # type: ignore[assignment]

    def _show_written(self) -> None:
        line = self.query_one("#rerun-written", Static)
        line.set_class(self.write_error is not None, "-failed")
        if self.write_error is not None:
            line.update(f"not written: {self.write_error}")
        elif self.written is not None:
            if self.written.dump is not None:
                line.update(
                    f"dump written: {self.written.dump}\ndebug records appended to: {self.written.debug_log}"
                )
            else:
                line.update(
                    "no dump written (openJiuwen writes one only for an applied compression); "
                    f"debug records appended to: {self.written.debug_log}"
                )
        elif self.result is not None:
            what = "the dump" if self.result.outcome == "applied" else "openJiuwen's debug records"
            line.update(f"w writes {what} into {self.request.out_dir}")
        else:
            line.update("")

    # --- workers -------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="rerun", exit_on_error=False)
    def run_rerun(self, run: int, request: RerunRequest) -> None:
        """Run the call in this thread's own event loop; post the result unless cancelled."""
        loop = asyncio.new_event_loop()
        with self._loop_lock:
            self._loop = loop
        try:
            result = loop.run_until_complete(self._call_model(run, request))
        except asyncio.CancelledError:
            return  # cancelled: the screen already says so
        finally:
            with self._loop_lock:
                if self._loop is loop:
                    self._loop = None
            loop.close()
        self.post_message(self.RerunFinished(run, result))

    @property
    def call_in_flight(self) -> bool:
        """True while a run's event loop (its HTTP call, its retries) is still going."""
        with self._loop_lock:
            return self._loop is not None

    def _cancel_loop(self) -> None:
        """Cancel every task of the running run's loop (from the UI thread)."""
        with self._loop_lock:
            loop = self._loop
            if loop is None or loop.is_closed():
                return

            def cancel_all() -> None:
                for task in asyncio.all_tasks(loop):
                    task.cancel()

            loop.call_soon_threadsafe(cancel_all)

    async def _call_model(self, run: int, request: RerunRequest) -> RerunResult:
        """Call the model as openJiuwen would; post each step and attempt."""
        assert self.artifact.snapshot is not None

        def step(text: str) -> None:
            self.post_message(self.StepChanged(run, text))

        count = len(self.artifact.snapshot.messages)
        step(f"preparing the request (counting {count:,} messages)")
        inputs = rerun_inputs(
            self.artifact,
            self.tuning,
            prompt_file=request.prompt_file if request.prompt_choice == "file" else None,
            use_builtin=request.prompt_choice == "builtin",
        )
        counter = self.counters[self.tuning.token_mode] if self.counters else None
        attempts: list[Attempt] = []

        def attempted(attempt: Attempt) -> None:
            attempts.append(attempt)
            self.post_message(self.AttemptMade(run, attempt))
            if attempt.failure is None:
                step("judging the reply (summary, re-injection, benefit check)")
            elif attempt.action == "shrink":
                step(f"attempt {attempt.number} failed: shrinking the span for the next one")

        async def sleep(seconds: float) -> None:
            step(f"waiting {seconds:.1f} s before attempt {len(attempts) + 1} (retry policy)")
            await asyncio.sleep(seconds)

        inner = self.transport or httpx.AsyncHTTPTransport()
        watched = _WatchedTransport(inner, lambda: step(_waiting_for(len(attempts) + 1)))
        return await rerun_compaction(
            self.artifact.snapshot,
            self.tuning,
            request.endpoint(),
            RerunOptions(
                prompt=inputs.prompt,
                prompt_source=inputs.prompt_source,
                wrapper=inputs.wrapper,
                include_tools=request.include_tools,
                policy=request.policy,
                counter=counter,
                identity=inputs.identity,
            ),
            RerunHooks(transport=watched, on_attempt=attempted, sleep=sleep, env=self.env),
        )

    @work(exclusive=True, group="rerun-write", thread=True, exit_on_error=False)
    def write_dump(self, result: RerunResult, out_dir: Path) -> None:
        """Write the dump and debug records into the chosen folder; post where they went."""
        self.post_message(self.DumpWritten(write_rerun(result, out_dir)))

    # --- messages --------------------------------------------------------------------------

    @on(AttemptMade)
    def _attempt_made(self, event: AttemptMade) -> None:
        if event.run == self.run_number and self.state == "running":
            self.attempts.append(event.attempt)
            self._show_attempts()
            self._show_status()

    @on(StepChanged)
    def _step_changed(self, event: StepChanged) -> None:
        if event.run == self.run_number and self.state == "running":
            self.step = event.text
            self.steps.append(event.text)
            self._show_status()

    @on(RerunFinished)
    def _rerun_finished(self, event: RerunFinished) -> None:
        if event.run != self.run_number or self.state != "running":
            return
        self.result = event.result
        self.attempts = list(event.result.attempts)
        self._finish("done")
        self.query_one("#before-after-pane", VerticalScroll).focus()

    @on(DumpWritten)
    def _dump_written(self, event: DumpWritten) -> None:
        self.written = event.written
        self.write_error = None
        self._show_written()
        self.refresh_bindings()
        where = event.written.dump or event.written.debug_log
        self.notify(f"written: {where}", title="re-run saved")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place worker errors become plain words on screen."""
        worker = event.worker
        if event.state != WorkerState.ERROR:
            return
        error = worker.error or RuntimeError("unknown")
        message = _redact(plain_error(error, writing=worker.group == "rerun-write"), self._secret())
        if worker.group == "rerun":
            if worker is self._worker and self.state == "running":
                self.error_message = message
                self._finish("error")
        elif worker.group == "rerun-write":
            self.write_error = message
            self._show_written()

    # --- actions -------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Cancel only while running; write once a result exists; the rest when idle."""
        running = self.state == "running"
        if action == "cancel_run":
            return running
        if action == "close":
            return not running
        if action == "write_dump":
            if self.result is None:
                return False
            return None if self.written is not None else True
        if action == "edit_rerun":
            return not running
        if action == "show_tab":
            return self.result is not None
        return True

    def action_cancel_run(self) -> None:
        """Stop the model call; the screen says "cancelled"."""
        if self.state != "running":
            return
        if self._worker is not None:
            self._worker.cancel()
        self._cancel_loop()  # the request itself stops, not only the wait for it
        self._finish("cancelled")

    def action_close(self) -> None:
        """Back to where the re-run was started."""
        self.dismiss(None)

    def action_write_dump(self) -> None:
        """Write the new dump (applied results) and the debug records to the output folder."""
        if self.result is not None and self.written is None:
            self.write_dump(self.result, self.request.out_dir)

    def action_edit_rerun(self) -> None:
        """Open the form with the current values; a submit starts a new run here."""

        def submitted(request: RerunRequest | None) -> None:
            if request is not None:
                self.request = request
                self.start_run()

        self.app.push_screen(
            RerunDialog(self.artifact, defaults=self.request, env=self.env), submitted
        )

    def action_show_tab(self, tab: str) -> None:
        """Switch the result tab."""
        self.query_one("#rerun-tabs", TabbedContent).active = tab
        self.query_one(f"#{tab} VerticalScroll", VerticalScroll).focus()


def _waiting_for(number: int) -> str:
    return f"attempt {number}: request sent, waiting for the reply"


class _WatchedTransport(httpx.AsyncBaseTransport):
    """The run's transport, saying when each request is sent (the step line)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, on_send: Any) -> None:
        self.inner = inner
        self.on_send = on_send

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Say the request is sent, then send it."""
        self.on_send()
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        """Close the inner transport."""
        await self.inner.aclose()


def open_rerun(
    app: App[Any],
    artifact: Artifact,
    tuning: Tuning,
    *,
    counters: Mapping[str, TokenCounter] | None = None,
    env: Mapping[str, str] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    defaults: RerunRequest | None = None,
) -> None:
    """Show the re-run form for this context and tuning; on submit, push the run screen."""
    if artifact.snapshot is None:
        app.notify(
            f"{artifact.id} holds no context to re-run (a debug log alone)",
            title="cannot re-run",
            severity="warning",
        )
        return
    if tuning.processor not in COMPACTING_PROCESSORS:
        app.notify(
            f"the {tuning.processor_class} does not call a model; re-run works for openJiuwen's "
            f"LLM compressors ({', '.join(COMPACTING_PROCESSORS)})",
            title="cannot re-run",
            severity="warning",
        )
        return

    def submitted(request: RerunRequest | None) -> None:
        if request is not None:
            app.push_screen(
                RerunScreen(
                    artifact, tuning, request, counters=counters, env=env, transport=transport
                )
            )

    app.push_screen(RerunDialog(artifact, defaults=defaults, env=env), submitted)
