"""Keep a document's form fields interactive in a combined PDF, when a production says so, without renaming
or merging them.

Two documents may each have a field named ``Signatory``. In one PDF, fields with the same fully qualified name
are one field with one value (ISO 32000-1, 12.7.3.2), so merging them would show one document's value in the
other; PyMuPDF's ``insert_pdf`` instead renames the second (``Signatory [19]``), which breaks the document's
own scripts and any data exchange keyed on the name. Here each document's top-level fields become kids of one
parent field named after the document's first Bates number: the qualified names (``SMITH000001.Signatory``)
differ, the fields' own names stay as they were, and :func:`restore_names` undoes the renaming after combining.
"""

import pymupdf


def _refs(array: str) -> list[int]:
    parts = array.strip().strip("[]").split()
    return [int(parts[i]) for i in range(0, len(parts) - 2, 3) if parts[i + 2] == "R"]


def _field_of(doc: pymupdf.Document, widget_xref: int) -> int | None:
    """The field a widget belongs to: the widget itself or its nearest ancestor with a name (/T)."""
    xref = widget_xref
    for _ in range(32):  # field trees are shallow; a cycle must not loop forever
        if doc.xref_get_key(xref, "T")[0] == "string":
            return xref
        kind, parent = doc.xref_get_key(xref, "Parent")
        if kind != "xref":
            return None
        xref = int(parent.split()[0])
    return None


def nest_fields(doc: pymupdf.Document, parent_name: str) -> dict[int, list[tuple[pymupdf.Rect, str]]]:
    """Put every top-level field of ``doc`` under one new parent field named ``parent_name`` (a Bates number:
    letters, digits, '-', '_' and '.', never a period inside a partial name, so it is written without the
    period). Return, per page number, each widget's rectangle and own name (/T), for :func:`restore_names`."""
    catalog = doc.pdf_catalog()
    kind, fields = doc.xref_get_key(catalog, "AcroForm/Fields")
    names: dict[int, list[tuple[pymupdf.Rect, str]]] = {}
    if kind != "array" or not _refs(fields):
        return names
    top = _refs(fields)
    parent = doc.get_new_xref()
    # A period separates the parts of a qualified name, so it cannot be inside one (12.7.3.2).
    kids = " ".join(f"{xref} 0 R" for xref in top)
    doc.update_object(parent, f"<</T{pymupdf.get_pdf_str(parent_name.replace('.', '_'))}/Kids[{kids}]>>")
    for xref in top:
        doc.xref_set_key(xref, "Parent", f"{parent} 0 R")
    doc.xref_set_key(catalog, "AcroForm/Fields", f"[{parent} 0 R]")
    for page in doc:
        for widget in page.widgets():
            field = _field_of(doc, widget.xref)
            if field is not None:
                names.setdefault(page.number, []).append((pymupdf.Rect(widget.rect), doc.xref_get_key(field, "T")[1]))
    return names


def restore_names(combined: pymupdf.Document, start: int, names: dict[int, list[tuple[pymupdf.Rect, str]]]) -> None:
    """Give the widgets of the document whose first page is ``combined`` page ``start`` their own names back
    (``names`` from :func:`nest_fields`), matched by page and rectangle."""
    for number, fields in names.items():
        page = combined[start + number]
        for widget in page.widgets():
            own = next((name for rect, name in fields if rect == widget.rect), None)
            field = _field_of(combined, widget.xref)
            if own is not None and field is not None:
                combined.xref_set_key(field, "T", pymupdf.get_pdf_str(own))
