"""The re-run form: endpoint, model, key variable, prompt, tools, retry policy, output folder.

A modal dialog that dismisses with a `RerunRequest` (or None when cancelled). Validation is
a pure function (`parse_form`) so it is tested without a terminal; its messages appear
inline under each field. The API key itself is never read into a widget: the form holds
only the name of its environment variable and says whether that variable is set.

The endpoint, model and key variable name start from the saved preferences
(`inspector.prefs`); with "remember" ticked, a valid submit saves what was typed there
(never the key: the preferences refuse anything that looks like one).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, RadioButton, RadioSet, Static

from inspector.core.artifact import Artifact
from inspector.core.compaction import Sampling
from inspector.core.rerun import RetryPolicy
from inspector.llm import (
    DEFAULT_API_KEY_ENV,
    EndpointConfig,
    OutputDirError,
    check_out_dir,
    default_out_dir,
)
from inspector.prefs import Preferences, load_prefs, update_prefs

PromptChoice = Literal["recorded", "builtin", "file"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_TIMEOUT_S = 120.0
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class RerunRequest:
    """What the user asked for: where to call, with which prompt and policy, where to write."""

    base_url: str
    model: str
    out_dir: Path
    #: Name of the environment variable holding the key (its value is never stored here).
    api_key_env: str = DEFAULT_API_KEY_ENV
    #: False sends no Authorization header (local servers that need no key).
    send_key: bool = True
    prompt_choice: PromptChoice = "recorded"
    prompt_file: str | None = None
    #: Offer the agent's tools with tool_choice "auto", as openJiuwen does.
    include_tools: bool = True
    policy: RetryPolicy = "openjiuwen"
    timeout_s: float = DEFAULT_TIMEOUT_S

    def endpoint(self, sampling: Sampling | None = None) -> EndpointConfig:
        """The endpoint configuration for `rerun_compaction`."""
        return EndpointConfig(
            base_url=self.base_url,
            model=self.model,
            api_key_env=self.api_key_env,
            timeout_s=self.timeout_s,
            sampling=sampling or Sampling(),
            require_key=self.send_key,
        )


@dataclass(frozen=True, slots=True)
class FormValues:
    """The raw field values as typed, before validation."""

    base_url: str
    model: str
    api_key_env: str
    send_key: bool
    prompt_choice: PromptChoice
    prompt_file: str
    include_tools: bool
    policy: RetryPolicy
    timeout: str
    out_dir: str


def key_status(name: str, send_key: bool, env: Mapping[str, str]) -> str:
    """Plain words about the key variable: set or not (never its value)."""
    if not send_key:
        return "no Authorization header will be sent"
    if not name:
        return ""
    if not _ENV_NAME_RE.match(name):
        return ""
    return f"{name} is set (value hidden)" if env.get(name) else f"{name} is not set"


def parse_form(
    values: FormValues, sources: list[str], env: Mapping[str, str]
) -> tuple[RerunRequest | None, dict[str, str]]:
    """Validate the form: a request when every field is fine, else field id -> message."""
    errors: dict[str, str] = {}
    base_url = values.base_url.strip()
    parts = urlsplit(base_url)
    if not base_url:
        errors["base-url"] = "enter the endpoint's base URL, e.g. https://api.openai.com/v1"
    elif parts.scheme not in ("http", "https") or not parts.netloc:
        errors["base-url"] = "the base URL must start with http:// or https:// and name a host"
    model = values.model.strip()
    if not model:
        errors["model"] = "enter the model name sent in the request"
    key_env = values.api_key_env.strip()
    if values.send_key:
        if not key_env:
            errors["key-env"] = "enter the name of the variable that holds the API key"
        elif not _ENV_NAME_RE.match(key_env):
            errors["key-env"] = f"{key_env!r} is not a valid environment variable name"
        elif not env.get(key_env):
            errors["key-env"] = (
                f"{key_env} is not set in the inspector's environment: export it and restart, "
                "name another variable, or turn 'send a key' off for a local server"
            )
    prompt_file: str | None = None
    if values.prompt_choice == "file":
        raw = values.prompt_file.strip()
        if not raw:
            errors["prompt-file"] = "enter the path of the prompt file"
        elif not Path(raw).expanduser().is_file():
            errors["prompt-file"] = f"no such file: {raw}"
        else:
            prompt_file = str(Path(raw).expanduser())
    timeout = DEFAULT_TIMEOUT_S
    try:
        timeout = float(values.timeout.strip() or DEFAULT_TIMEOUT_S)
        if not timeout > 0:
            raise ValueError
    except ValueError:
        errors["timeout"] = "the timeout must be a number of seconds above 0"
    out_raw = values.out_dir.strip()
    out_dir = Path(out_raw).expanduser() if out_raw else default_out_dir()
    try:
        check_out_dir(out_dir, sources)
    except OutputDirError as error:
        errors["out-dir"] = str(error).replace("choose another --out", "choose another folder")
    if out_dir.exists() and not out_dir.is_dir():
        errors["out-dir"] = f"{out_dir} exists and is not a folder"
    if errors:
        return None, errors
    return (
        RerunRequest(
            base_url=base_url,
            model=model,
            out_dir=out_dir,
            api_key_env=key_env or DEFAULT_API_KEY_ENV,
            send_key=values.send_key,
            prompt_choice=values.prompt_choice,
            prompt_file=prompt_file,
            include_tools=values.include_tools,
            policy=values.policy,
            timeout_s=timeout,
        ),
        {},
    )


def default_request(
    artifact: Artifact, env: Mapping[str, str], prefs: Preferences | None = None
) -> RerunRequest:
    """Starting values: the saved endpoint, model and key variable (else the base URL from
    OPENAI_BASE_URL), the recorded prompt for a dump."""
    prefs = prefs or Preferences()
    return RerunRequest(
        base_url=prefs.endpoint or env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL,
        model=prefs.model or "",
        out_dir=default_out_dir(),
        api_key_env=prefs.api_key_env or DEFAULT_API_KEY_ENV,
        prompt_choice="recorded" if artifact.kind == "dump" else "builtin",
    )


def remember_request(request: RerunRequest, path: Path | None = None) -> str:
    """Save the request's endpoint, model and key variable NAME in the preferences;
    "" when saved, else why not (in words). The key itself is never saved."""
    try:
        update_prefs(
            path, endpoint=request.base_url, model=request.model, api_key_env=request.api_key_env
        )
    except ValueError as error:  # pydantic's ValidationError: a name that looks like a key
        return f"not remembered: the key variable {_first_error(error)}"
    except OSError as error:
        return f"not remembered: cannot write the preferences ({error.strerror or error})"
    return ""


def _first_error(error: ValueError) -> str:
    errors = getattr(error, "errors", None)
    if callable(errors):
        items = errors()
        if items:
            return str(items[0].get("msg", error)).removeprefix("Value error, ")
    return str(error)


class RerunDialog(ModalScreen[RerunRequest | None]):
    """The re-run form; dismisses with a `RerunRequest`, or None on Escape."""

    DEFAULT_CSS = """
    RerunDialog { align: center middle; }
    RerunDialog #rerun-form {
        width: 90%; max-width: 110; height: auto; max-height: 95%;
        background: $surface; border: round $accent; padding: 0 1;
    }
    RerunDialog #form-title { text-style: bold; height: 1; }
    RerunDialog #form-source { color: $text-muted; height: auto; margin-bottom: 1; }
    RerunDialog .field { height: auto; }
    RerunDialog .field Label { width: 15; }
    RerunDialog .field Input { width: 1fr; }
    RerunDialog .field RadioSet { width: 1fr; layout: horizontal; }
    RerunDialog .field RadioSet > RadioButton { width: auto; margin-right: 2; }
    RerunDialog .field Checkbox { width: auto; }
    RerunDialog #send-key { margin-left: 2; }
    RerunDialog .hint { color: $text-muted; width: 1fr; margin-left: 2; }
    RerunDialog .field-error { color: $text-error; height: auto; min-height: 1; margin-left: 15; }
    RerunDialog #key-status { margin-left: 15; color: $text-muted; height: auto; }
    RerunDialog #key-status.-missing { color: $text-warning; }
    RerunDialog #timeout { width: 10; }
    RerunDialog #form-buttons { height: auto; align-horizontal: right; margin: 0; }
    RerunDialog #form-buttons Button { margin-left: 2; }
    """

    BINDINGS = [
        Binding(
            "escape",
            "cancel",
            "Cancel",
            tooltip="Leave the field; from outside a field: close the form without running",
        ),
        Binding("ctrl+r", "submit", "Run", tooltip="Check the form and start the re-run"),
    ]

    def __init__(
        self,
        artifact: Artifact,
        *,
        defaults: RerunRequest | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.artifact = artifact
        self.env: Mapping[str, str] = os.environ if env is None else env
        self.prefs, _problem = load_prefs()  # a bad file: the app said so at start
        self.defaults = defaults or default_request(artifact, self.env, self.prefs)
        #: What a submit with "remember" ticked could not save ("" when saved or not asked).
        self.remember_problem = ""
        #: Field id -> message of the last failed submit (empty once the form is valid).
        self.errors: dict[str, str] = {}

    # --- layout ------------------------------------------------------------------------

    def _error_slot(self, field_id: str) -> Static:
        return Static("", id=f"error-{field_id}", classes="field-error", markup=False)

    def compose(self) -> ComposeResult:
        """One row per field, an error line under each, Run and Cancel."""
        with VerticalScroll(id="rerun-form"):
            yield Static(
                "Re-run the compaction against a real model", id="form-title", markup=False
            )
            yield Static(
                f"{self.artifact.kind} {self.artifact.id}\n{self.artifact.source}",
                id="form-source",
                markup=False,
            )
            yield from self._endpoint_fields()
            yield from self._prompt_fields()
            yield from self._call_fields()
            with Horizontal(id="form-buttons"):
                yield Button("Run (ctrl+r)", variant="primary", id="run", compact=True)
                yield Button("Cancel (esc)", id="cancel", compact=True)

    def _endpoint_fields(self) -> ComposeResult:
        """Base URL, model, the key's variable and whether to send a key."""
        d = self.defaults
        with Horizontal(classes="field"):
            yield Label("Base URL")
            yield Input(d.base_url, placeholder=DEFAULT_BASE_URL, id="base-url", compact=True)
        yield self._error_slot("base-url")
        with Horizontal(classes="field"):
            yield Label("Model")
            yield Input(
                d.model, placeholder="model name, e.g. gpt-4o-mini", id="model", compact=True
            )
        yield self._error_slot("model")
        with Horizontal(classes="field"):
            yield Label("Key variable")
            yield Input(d.api_key_env, placeholder=DEFAULT_API_KEY_ENV, id="key-env", compact=True)
            yield Checkbox("send a key", d.send_key, id="send-key", compact=True)
        yield Static("", id="key-status", markup=False)
        yield self._error_slot("key-env")

    def _prompt_fields(self) -> ComposeResult:
        """Which prompt (recorded, built-in, a file) and the file's path."""
        d = self.defaults
        is_dump = self.artifact.kind == "dump"
        with Horizontal(classes="field"):
            yield Label("Prompt")
            with RadioSet(id="prompt", compact=True):
                yield RadioButton(
                    "recorded in the dump" if is_dump else "recorded (dumps only)",
                    value=d.prompt_choice == "recorded" and is_dump,
                    id="prompt-recorded",
                    disabled=not is_dump,
                )
                yield RadioButton(
                    "built-in",
                    value=d.prompt_choice == "builtin"
                    or (d.prompt_choice == "recorded" and not is_dump),
                    id="prompt-builtin",
                )
                yield RadioButton("file", value=d.prompt_choice == "file", id="prompt-choose-file")
        with Horizontal(classes="field"):
            yield Label("Prompt file")
            yield Input(
                d.prompt_file or "",
                placeholder="path (with 'file' chosen)",
                id="prompt-file",
                compact=True,
            )
        yield self._error_slot("prompt-file")

    def _call_fields(self) -> ComposeResult:
        """Tools offered, retry policy, timeout and the output folder."""
        d = self.defaults
        with Horizontal(classes="field"):
            yield Label("Tools")
            yield Checkbox("offer the agent's tools", d.include_tools, id="tools", compact=True)
            yield Static(
                "openJiuwen does; a reply that calls one skips the compression",
                classes="hint",
                markup=False,
            )
        yield self._error_slot("tools")
        with Horizontal(classes="field"):
            yield Label("Retry policy")
            with RadioSet(id="policy", compact=True):
                yield RadioButton(
                    "openJiuwen's (reads error text)",
                    value=d.policy == "openjiuwen",
                    id="policy-openjiuwen",
                )
                yield RadioButton("by status code", value=d.policy == "status", id="policy-status")
        yield self._error_slot("policy")
        with Horizontal(classes="field"):
            yield Label("Timeout (s)")
            yield Input(f"{d.timeout_s:g}", id="timeout", compact=True)
            yield Static("per HTTP call", classes="hint", markup=False)
        yield self._error_slot("timeout")
        with Horizontal(classes="field"):
            yield Label("Output folder")
            yield Input(str(d.out_dir), id="out-dir", compact=True)
        yield self._error_slot("out-dir")
        remembered = any((self.prefs.endpoint, self.prefs.model, self.prefs.api_key_env))
        with Horizontal(classes="field"):
            yield Label("")
            yield Checkbox(
                "remember endpoint, model and key variable name",
                remembered,
                id="remember",
                compact=True,
            )
            yield Static(
                "saved in the preferences; never the key itself", classes="hint", markup=False
            )

    def on_mount(self) -> None:
        """Focus the first field that still needs a value; show the key status."""
        self._show_key_status()
        first = "#model" if self.defaults.base_url else "#base-url"
        self.query_one(first, Input).focus()

    # --- state ---------------------------------------------------------------------------

    def form_values(self) -> FormValues:
        """The fields as they are now."""
        prompt_button = self.query_one("#prompt", RadioSet).pressed_button
        prompt_choice: PromptChoice = {
            "prompt-recorded": "recorded",
            "prompt-choose-file": "file",
        }.get(prompt_button.id if prompt_button and prompt_button.id else "", "builtin")  # type: ignore[assignment]
        policy_button = self.query_one("#policy", RadioSet).pressed_button
        policy: RetryPolicy = (
            "status"
            if policy_button is not None and policy_button.id == "policy-status"
            else "openjiuwen"
        )
        return FormValues(
            base_url=self.query_one("#base-url", Input).value,
            model=self.query_one("#model", Input).value,
            api_key_env=self.query_one("#key-env", Input).value,
            send_key=self.query_one("#send-key", Checkbox).value,
            prompt_choice=prompt_choice,
            prompt_file=self.query_one("#prompt-file", Input).value,
            include_tools=self.query_one("#tools", Checkbox).value,
            policy=policy,
            timeout=self.query_one("#timeout", Input).value,
            out_dir=self.query_one("#out-dir", Input).value,
        )

    def _show_errors(self) -> None:
        for slot in self.query(".field-error").results(Static):
            field_id = (slot.id or "").removeprefix("error-")
            message = self.errors.get(field_id, "")
            slot.update(message)
            slot.set_class(bool(message), "-shown")

    def _show_key_status(self) -> None:
        name = self.query_one("#key-env", Input).value.strip()
        send_key = self.query_one("#send-key", Checkbox).value
        status = self.query_one("#key-status", Static)
        # once a submit explained the problem, the error line says it; no need to repeat it
        status.update("" if "key-env" in self.errors else key_status(name, send_key, self.env))
        status.set_class(send_key and bool(name) and not self.env.get(name), "-missing")

    # --- events and actions ----------------------------------------------------------------

    @on(Input.Changed, "#key-env")
    @on(Checkbox.Changed, "#send-key")
    def _key_changed(self) -> None:
        if self.errors.pop("key-env", None) is not None:
            self._show_errors()
        self._show_key_status()

    @on(Input.Changed, "#prompt-file")
    def _prompt_file_typed(self, event: Input.Changed) -> None:
        """Typing a prompt path chooses the 'file' prompt."""
        if event.value.strip():
            self.query_one("#prompt-choose-file", RadioButton).value = True

    @on(Input.Submitted)
    def _enter_pressed(self) -> None:
        self.action_submit()

    @on(Button.Pressed, "#run")
    def _run_pressed(self) -> None:
        self.action_submit()

    @on(Button.Pressed, "#cancel")
    def _cancel_pressed(self) -> None:
        self.dismiss(None)

    def action_submit(self) -> None:
        """Validate; dismiss with the request, or show what is wrong under each field."""
        request, self.errors = parse_form(self.form_values(), [self.artifact.source], self.env)
        self._show_errors()
        self._show_key_status()
        if request is not None:
            if self.query_one("#remember", Checkbox).value:
                self.remember_problem = remember_request(request)
                if self.remember_problem:
                    self.app.notify(self.remember_problem, severity="warning")
            self.dismiss(request)
            return
        first = next(iter(self.errors))
        target = {"prompt-file": "#prompt-file"}.get(first, f"#{first}")
        self.query_one(target, Input).focus()

    def action_cancel(self) -> None:
        """Leave the field being typed in (what was typed stays); outside a field, close
        the form without running."""
        if isinstance(self.focused, Input):
            self.query_one("#rerun-form", VerticalScroll).focus()
            return
        self.dismiss(None)
