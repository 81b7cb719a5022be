"""A small, strict kustomize renderer for the tests of k8s/ (no kustomize binary needed).

It knows the fields k8s/ uses: `resources` (files and directories with a kustomization.yaml,
recursively), `namespace`, `labels`, `images`, `secretGenerator` (literals, no name hash)
and `patches` (JSON 6902 operations or strategic-merge patches, inline or by `path`, with
or without a `target`; a strategic-merge patch of `$patch: delete` removes what it targets).
Anything else is an error rather than silently ignored (other `$patch` directives too), and
so is a patch whose target matches nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonpatch
import yaml

Doc = dict[str, Any]

KNOWN_FIELDS = frozenset(
    {
        "apiVersion",
        "kind",
        "namespace",
        "resources",
        "labels",
        "images",
        "secretGenerator",
        "patches",
    }
)
CLUSTER_SCOPED = frozenset(
    {"Namespace", "ClusterRole", "ClusterRoleBinding", "PersistentVolume", "StorageClass"}
)
POD_OWNERS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "Job", "ReplicaSet"})


class RenderError(Exception):
    """The kustomization uses something this renderer does not know, or does not add up."""


def load_documents(path: Path) -> list[Doc]:
    """Returns the non-empty YAML documents of `path`."""
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def render(directory: Path) -> list[Doc]:
    """Returns the documents the kustomization in `directory` renders, in order."""
    kustomization = load_documents(directory / "kustomization.yaml")[0]
    unknown = set(kustomization) - KNOWN_FIELDS
    if unknown:
        raise RenderError(f"{directory}: unsupported kustomization fields {sorted(unknown)}")
    docs: list[Doc] = []
    for resource in kustomization.get("resources", []):
        path = (directory / resource).resolve()
        docs.extend(render(path) if path.is_dir() else load_documents(path))
    docs.extend(generated_secret(spec) for spec in kustomization.get("secretGenerator", []))
    for patch in kustomization.get("patches", []):
        apply_patch(docs, patch, directory)
    if "namespace" in kustomization:
        for doc in docs:
            if doc["kind"] not in CLUSTER_SCOPED:
                doc["metadata"]["namespace"] = kustomization["namespace"]
    for label in kustomization.get("labels", []):
        apply_labels(docs, label)
    for image in kustomization.get("images", []):
        rewrite_images(docs, image)
    return docs


def generated_secret(spec: Doc) -> Doc:
    """Returns the Secret a `secretGenerator` entry with literals makes."""
    if not spec.get("options", {}).get("disableNameSuffixHash"):
        raise RenderError(f"secretGenerator {spec['name']}: name hashes are not supported")
    if set(spec) - {"name", "options", "literals", "type"}:
        raise RenderError(f"secretGenerator {spec['name']}: only literals are supported")
    data = dict(literal.split("=", 1) for literal in spec.get("literals", []))
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": spec["name"]},
        "type": spec.get("type", "Opaque"),
        "stringData": data,
    }


def matches(doc: Doc, target: Doc) -> bool:
    """Returns whether `doc` is selected by a patch `target` (kind, name, namespace)."""
    unknown = set(target) - {"kind", "name", "namespace", "group", "version"}
    if unknown:
        raise RenderError(f"unsupported patch target fields {sorted(unknown)}")
    group, _, version = doc["apiVersion"].rpartition("/")
    wanted = {
        "kind": doc["kind"],
        "name": doc["metadata"]["name"],
        "namespace": doc["metadata"].get("namespace"),
        "group": group,
        "version": version,
    }
    return all(wanted[key] == value for key, value in target.items())


def apply_patch(docs: list[Doc], patch: Doc, directory: Path) -> None:
    """Applies one `patches` entry to the documents it targets, in place."""
    if "path" in patch:
        body = load_documents(directory / patch["path"])
        content: Any = body[0] if len(body) == 1 else body
    else:
        content = yaml.safe_load(patch["patch"])
    target = patch.get("target")
    if target is None:
        if not isinstance(content, dict):
            raise RenderError("a JSON 6902 patch needs a target")
        target = {"kind": content["kind"], "name": content["metadata"]["name"]}
    selected = [i for i, doc in enumerate(docs) if matches(doc, target)]
    if not selected:
        raise RenderError(f"patch target {target} matches no resource")
    if isinstance(content, dict) and content.get("$patch") == "delete":
        docs[:] = [doc for i, doc in enumerate(docs) if i not in selected]
        return
    for index in selected:
        if isinstance(content, list):
            docs[index] = jsonpatch.JsonPatch(content).apply(docs[index])
        else:
            docs[index] = strategic_merge(docs[index], content)


def strategic_merge(base: Any, patch: Any) -> Any:
    """Returns `base` with `patch` merged in: maps recursively, `null` deletes a key, lists of
    named maps (containers, env, ports, volumes) merged by name, other lists replaced."""
    if isinstance(base, dict) and isinstance(patch, dict):
        directives = [key for key in patch if key.startswith("$")]
        if directives:
            raise RenderError(f"unsupported strategic-merge directives {directives}")
        merged = dict(base)
        for key, value in patch.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = strategic_merge(base[key], value) if key in base else value
        return merged
    if isinstance(base, list) and isinstance(patch, list) and _named(base) and _named(patch):
        by_name = {item["name"]: item for item in base}
        for item in patch:
            by_name[item["name"]] = strategic_merge(by_name.get(item["name"], {}), item)
        return list(by_name.values())
    return copy.deepcopy(patch)


def _named(items: list[Any]) -> bool:
    """Returns whether every item of a non-empty list is a map with a `name`."""
    return bool(items) and all(isinstance(item, dict) and "name" in item for item in items)


def pod_templates(doc: Doc) -> Iterator[Doc]:
    """Yields the pod template of a workload (none for other kinds)."""
    if doc["kind"] in POD_OWNERS:
        yield doc["spec"]["template"]


def containers(doc: Doc) -> Iterator[Doc]:
    """Yields every container and init container of a workload's pod template."""
    for template in pod_templates(doc):
        spec = template["spec"]
        yield from spec.get("initContainers", [])
        yield from spec.get("containers", [])


def apply_labels(docs: list[Doc], label: Doc) -> None:
    """Adds a `labels` entry's pairs to metadata (and selectors and templates if asked)."""
    if set(label) - {"pairs", "includeSelectors", "includeTemplates"}:
        raise RenderError(f"unsupported labels fields {sorted(label)}")
    pairs = label["pairs"]
    selectors = label.get("includeSelectors", False)
    templates = selectors or label.get("includeTemplates", False)
    for doc in docs:
        doc["metadata"].setdefault("labels", {}).update(pairs)
        if templates:
            for template in pod_templates(doc):
                template.setdefault("metadata", {}).setdefault("labels", {}).update(pairs)
        if selectors:
            selector = doc.get("spec", {}).get("selector")
            if doc["kind"] == "Service" and selector is not None:
                selector.update(pairs)
            elif isinstance(selector, dict) and "matchLabels" in selector:
                selector["matchLabels"].update(pairs)


def image_name(image: str) -> str:
    """Returns an image reference without its tag or digest."""
    name = image.split("@", 1)[0]
    registry, slash, last = name.rpartition("/")
    return f"{registry}{slash}{last.split(':', 1)[0]}"


def rewrite_images(docs: list[Doc], image: Doc) -> None:
    """Applies one `images` entry (newName, newTag, digest) to every matching container."""
    for doc in docs:
        for container in containers(doc):
            current = container["image"]
            if image_name(current) != image["name"]:
                continue
            name = image.get("newName", image["name"])
            if "digest" in image:
                container["image"] = f"{name}@{image['digest']}"
            elif "newTag" in image:
                container["image"] = f"{name}:{image['newTag']}"
            else:
                tag = current[len(image_name(current)) :]
                container["image"] = f"{name}{tag}"
