"""The plan's departures of the project's own (pipeline/plan/plan.py): the n-gram presets' short-document rules
and what a pre-trained model's export discards, each a deviation with its reason, and the tables of the papers
no run can make (paper_settings.yaml ``short_documents``, ``export``, ``not_reproduced``; docs/stages/report.md
"The plan")."""

from __future__ import annotations

from pipeline import experiments
from pipeline import ngram_presets as presets
from pipeline.objective_registry import NGRAM_OBJECTIVES


def one_line(text: str) -> str:
    return " ".join(text.split())


class PlanDepartures:
    """The departure methods of :class:`pipeline.plan.plan.Planner` (its ``config`` and ``paper``)."""

    def preset_knobs(self, objective: str) -> tuple[str, dict]:
        """The n-gram preset an objective reads and the knobs it runs in the pre-training language
        (pipeline/ngram_presets.py; the config's ngrams keys, where set, override them)."""
        ngrams = self.config["ngrams"]
        preset = experiments.ngram_preset(ngrams, objective)
        given = {k: ngrams.get(k) for k in presets.KNOBS}
        return preset, presets.knobs(preset, self.config["pretrain"]["language"], given)

    def preset_text(self, objective: str) -> str:
        """The n-gram preset an objective reads, with the knobs it runs (:meth:`preset_knobs`)."""
        ngrams = self.config["ngrams"]
        preset, knobs = self.preset_knobs(objective)
        return presets.describe(
            preset,
            self.config["pretrain"]["language"],
            knobs,
            bool(ngrams.get("lowercase")),
            ngrams.get("entities", True),
        )

    def ngram_deviations(self, objective: str) -> list[dict]:
        """The short-document rules the objective's n-gram preset applies, each a deviation from the papers'
        "top 3000 n-grams for each document" and one threshold (BURT §3.1, §5.1; ULR-BERT §4) and from the
        released pmi.py, with the switch that restores them (paper_settings.yaml ``short_documents``)."""
        if objective not in NGRAM_OBJECTIVES:
            return []
        _, knobs = self.preset_knobs(objective)
        lang = self.config["pretrain"]["language"]
        unit = "word" if lang == "en" else "character"
        ours = {}
        if knobs.get("top_k_per_token") is not None:
            ours["top_k_per_token"] = (
                f"K = min({knobs['top_k']}, ⌈{knobs['top_k_per_token']:g} × the document's {unit}s⌉)"
                if knobs.get("top_k_full_tokens") is None  # else the ramp's words (ngram_presets.py)
                else presets.short_document_text({**knobs, "threshold_tokens": None}, lang)
            )
        if knobs.get("threshold_tokens") is not None and knobs.get("threshold") is not None:
            t0 = knobs["threshold_tokens"]
            ours["threshold_tokens"] = (
                f"threshold {knobs['threshold']:g} × log T / log {t0:g} on a document of T < {t0:g} {unit}s"
            )
        rules = self.paper["short_documents"]
        return [
            {
                "key": rules[knob]["key"],
                "ours": text,
                "paper": " ".join(rules[knob]["paper"].split()),
                "why": " ".join(rules[knob]["why"].split()),
                "switch": rules[knob]["switch"],
            }
            for knob, text in ours.items()
        ]

    def export_deviations(self, objective: str, glue_pooler: str) -> list[dict]:
        """What the objective's export discards that the released code keeps (NSP / SOP's trained pair head,
        paper_settings.yaml ``export``), as a deviation whose ours is the row's ``glue_pooler``."""
        lost = self.paper.get("export", {}).get(objective)
        if not lost:
            return []
        return [
            {"key": lost["key"], "ours": glue_pooler, "paper": one_line(lost["paper"]), "why": one_line(lost["why"])}
        ]

    def unreproduced_tables(self, papers: dict) -> list[dict]:
        """The tables no run can make (paper_settings.yaml ``not_reproduced``), as records of their own;
        ``papers``: published.yaml's, for each paper's short name."""
        return [
            {
                "paper": papers[entry["paper"]]["short"],
                "table": entry["table"],
                "row": "(every row)",
                "status": "not reproduced",
                "reason": " ".join(entry["reason"].split()),
            }
            for entry in self.paper.get("not_reproduced", [])
        ]
