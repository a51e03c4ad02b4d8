"""JUnit XML, the report format CI servers display: one test case per derivation."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from .report import ERROR, FAILED, INTERNAL, REFUTED, UNDECIDED, RunReport, write_atomically
from .terminal import failure_details


def junit_xml(run: RunReport) -> str:
    failures = sum(d.status in (FAILED, UNDECIDED) for d in run.derivations)
    errors = sum(d.status in (ERROR, INTERNAL) for d in run.derivations)
    seconds = sum(d.seconds for d in run.derivations)
    suites = ET.Element("testsuites", name="sdpa-proofs", tests=str(len(run.derivations)),
                        failures=str(failures), errors=str(errors), time=f"{seconds:.3f}")
    suite = ET.SubElement(suites, "testsuite", name="sdpa-proofs verify",
                          tests=str(len(run.derivations)), failures=str(failures),
                          errors=str(errors), skipped="0", time=f"{seconds:.3f}")
    for d in run.derivations:
        case = ET.SubElement(suite, "testcase", name=d.name, classname=_classname(d.file),
                             file=d.file, time=f"{d.seconds:.3f}")
        properties = ET.SubElement(case, "properties")
        ET.SubElement(properties, "property", name="claim", value=d.statement)
        ET.SubElement(properties, "property", name="expected", value=d.expected)
        for assumption in d.assumptions:
            ET.SubElement(properties, "property", name="assumption", value=assumption)
        for model in d.models:
            for step in model.steps:
                digits = step.numeric_check.digits
                ET.SubElement(properties, "property",
                              name=f"{model.model} step {step.index} ({step.rule})",
                              value=f"symbolic {step.symbolic.status}, numeric "
                                    f"{step.numeric_check.status}"
                                    + (f", {digits:.0f} digits" if digits is not None else ""))
        details = "\n".join(str(line) for line in failure_details(d))
        if d.status in (ERROR, INTERNAL):
            kind = "internal error" if d.status == INTERNAL else "bad input"
            ET.SubElement(case, "error", message=d.error, type=kind).text = d.internal or d.error
        elif d.status in (FAILED, UNDECIDED):
            first = details.splitlines()[0] if details else d.status
            ET.SubElement(case, "failure", message=first, type=d.status).text = details
        elif d.status == REFUTED:
            ET.SubElement(case, "system-out").text = details
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _classname(file: str) -> str:
    """derivations/dependent/shared_factor_mean.py -> derivations.dependent.shared_factor_mean"""
    path = Path(file)
    return ".".join(path.with_suffix("").parts[-3:]) if path.suffix == ".py" else file


def write_junit(run: RunReport, path: Path) -> None:
    write_atomically(path, junit_xml(run))
