// Predict-then-check view (anywidget). The check runs here, in the browser, on the spec the
// package computed in Python, so it works live in Jupyter and in the static book alike. A first
// wrong answer says what kind of wrong it is and offers another try; the answer shows after a
// second wrong try, or when the reader presses "Show the answer". Unreadable input is no try.
import { answer, check } from "./checker.js";

const HINTS = {
  number: "Type a number, such as 0.25, -3, 1e-4 or 1/3, then press Enter or Check.",
  vector: "Type numbers separated by commas or spaces, such as [0.5, 0.25], then press Check.",
  shape: "Type a shape, such as (4, 7, 3), 4,7,3 or [] for a scalar, then press Check.",
  choice: "Pick one option, then press Check.",
  explain: "Write a sentence or two, then press Check (or Ctrl+Enter).",
};
const ICONS = { correct: "\u2713", retry: "\u2717", wrong: "\u2717", invalid: "!", revealed: "\u2192" };
let instances = 0;

function h(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  for (const child of children) node.append(child);
  return node;
}

// Text with `code` spans; built from DOM nodes, never parsed as HTML.
function rich(text) {
  return text.split("`").map((part, i) => (i % 2 ? h("code", {}, [part]) : document.createTextNode(part)));
}

function render({ model, el }) {
  const spec = model.get("spec");
  const uid = `lfs-predict-${Date.now().toString(36)}-${(instances += 1)}`;
  const form = h("form", {
    class: "lfs-predict",
    "data-kind": spec.kind,
    "data-lm-suppress-shortcuts": "true",
    novalidate: "",
  });
  const tag = h("p", { class: "lfs-predict__tag" }, ["Predict, then check"]);
  const hint = h("p", { class: "lfs-predict__hint", id: `${uid}-hint` }, [HINTS[spec.kind]]);
  const feedback = h("div", { class: "lfs-predict__feedback", role: "status", "aria-live": "polite" });
  const button = h("button", { type: "submit", class: "lfs-predict__check" }, ["Check"]);
  const show = h("button", { type: "button", class: "lfs-predict__show" }, ["Show the answer"]);
  let read;
  let tries = 0; // wrong answers so far: the first gets another try, the second the answer

  if (spec.kind === "choice") {
    const group = h("fieldset", { class: "lfs-predict__options", "aria-describedby": hint.id });
    group.append(h("legend", { class: "lfs-predict__question" }, rich(spec.question)));
    spec.options.forEach((option, i) => {
      const radio = h("input", { type: "radio", name: uid, value: option, id: `${uid}-${i}` });
      group.append(h("label", { class: "lfs-predict__option", for: radio.id }, [radio, " ", ...rich(option)]));
    });
    form.append(tag, group, hint, h("div", { class: "lfs-predict__row" }, [button, show]));
    read = () => form.querySelector(`input[name="${uid}"]:checked`)?.value ?? "";
  } else {
    const question = h("p", { class: "lfs-predict__question", id: `${uid}-q` }, rich(spec.question));
    const explain = spec.kind === "explain";
    const field = h(explain ? "textarea" : "input", {
      class: "lfs-predict__input",
      "aria-labelledby": question.id,
      "aria-describedby": hint.id,
      autocomplete: "off",
      spellcheck: explain ? "true" : "false",
      ...(explain ? { rows: "3" } : { type: "text", placeholder: "your prediction" }),
    });
    form.append(tag, question, h("div", { class: "lfs-predict__row" }, [field, button, show]), hint);
    read = () => field.value;
    if (explain) {
      field.addEventListener("keydown", (event) => {
        if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
          event.preventDefault();
          form.requestSubmit();
        }
      });
    }
  }
  form.append(feedback);
  // Keys typed here belong to the widget, not to notebook shortcuts around it (as ipywidgets do).
  form.addEventListener("keydown", (event) => event.stopPropagation());
  const say = (outcome) => {
    const lines = [
      h("p", { class: "lfs-predict__verdict" }, [
        h("span", { class: "lfs-predict__icon", "aria-hidden": "true" }, [ICONS[outcome.status]]),
        " ",
        outcome.message,
      ]),
    ];
    if (spec.kind === "explain" && outcome.status === "revealed") {
      lines.push(h("blockquote", { class: "lfs-predict__model" }, rich(spec.model_answer)));
    } else if (["correct", "wrong", "revealed"].includes(outcome.status)) {
      lines.push(h("p", { class: "lfs-predict__reason" }, [h("strong", {}, ["Why: "]), ...rich(spec.reason)]));
    }
    feedback.dataset.status = outcome.status;
    feedback.dataset.tries = String(tries);
    feedback.replaceChildren(...lines);
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const outcome = check(spec, read(), tries);
    if (outcome.status === "retry" || outcome.status === "wrong") tries += 1;
    say(outcome);
  });
  show.addEventListener("click", () => say(answer(spec)));
  el.replaceChildren(form);
}

export default { render };
