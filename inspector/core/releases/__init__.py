"""openJiuwen release profiles and release detection (pure core).

Must not import anything outside the standard library and `inspector.core`.
"""

from __future__ import annotations

from inspector.core.releases.counting import CountingChoice, choose_counting, snapshot_evidence
from inspector.core.releases.detect import (
    ArtifactEvidence,
    ReleaseDetection,
    collect_evidence,
    detect_release,
)
from inspector.core.releases.profiles import (
    FIRST_FORKED_RELEASE,
    NEWEST_PROFILE,
    PROFILE_0_1_17,
    PROFILE_0_1_18,
    PROFILES,
    RELEASES,
    ProfileChoice,
    ReleaseProfile,
    profile_for_release,
    profile_named,
    release_key,
)

__all__ = [
    "CountingChoice",
    "choose_counting",
    "snapshot_evidence",
    "ArtifactEvidence",
    "ReleaseDetection",
    "collect_evidence",
    "detect_release",
    "FIRST_FORKED_RELEASE",
    "NEWEST_PROFILE",
    "PROFILES",
    "PROFILE_0_1_17",
    "PROFILE_0_1_18",
    "RELEASES",
    "ProfileChoice",
    "ReleaseProfile",
    "profile_for_release",
    "profile_named",
    "release_key",
]
