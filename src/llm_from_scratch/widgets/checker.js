// The predict-then-check checker, in the browser. A line-for-line mirror of checker.py:
// tests/widgets/test_checker_js.py runs both on the same cases and requires equal verdicts.

const WS = " \\t\\n\\r\\f\\v\\u00a0";
const WS_RUN = new RegExp(`[${WS}]+`);
const WS_EDGES = new RegExp(`^[${WS}]+|[${WS}]+$`, "g");
const NUMBER = /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;
const AXIS = /^[0-9]+$/;
const SHAPE_TIMES = /[xX\u00d7]/g;
const MINUS_SIGN = /\u2212/g;
const BRACKET_PAIRS = { ")": "(", "]": "[" };
const MAX_QUOTED = 24;
const MAX_LISTED = 5;

export const EMPTY_MESSAGES = {
  number: "Type a number first, then press Check.",
  vector: "Type your numbers first, then press Check.",
  shape: "Type a shape first, such as (4, 7, 3), then press Check.",
  choice: "Pick an option first, then press Check.",
  explain: "Write your explanation first, then press Check.",
};
const BRACKETS_MESSAGE = "The brackets do not match: close each ( with ) and each [ with ].";
const EMPTY_ENTRY_MESSAGE = "There is an empty entry between commas; remove the extra comma.";
const UNKNOWN_OPTION_MESSAGE = "Pick one of the listed options.";
const EXPLAIN_MESSAGE = "Compare your explanation with this model answer:";

const verdict = (status, message) => ({ status, message });
const isVerdict = (x) => x !== null && typeof x === "object" && !Array.isArray(x);

export function stripBlank(text) {
  return text.replace(WS_EDGES, "");
}

function quote(token) {
  const chars = Array.from(token); // code points, as Python counts them
  const shown = chars.length > MAX_QUOTED ? chars.slice(0, MAX_QUOTED).join("") + "\u2026" : token;
  return `"${shown}"`;
}

function joinPositions(positions) {
  const words = positions.map(String);
  if (words.length > MAX_LISTED + 1) {
    return `${words.slice(0, MAX_LISTED).join(", ")} and ${words.length - MAX_LISTED} more`;
  }
  if (words.length === 1) return words[0];
  return `${words.slice(0, -1).join(", ")} and ${words[words.length - 1]}`;
}

const plural = (count, singular, many) => `${count} ${count === 1 ? singular : many}`;

export function splitEntries(text, kind) {
  text = text.replace(MINUS_SIGN, "-");
  if (kind === "shape") text = text.replace(SHAPE_TIMES, ",");
  text = stripBlank(text);
  if (text === "") return verdict("invalid", EMPTY_MESSAGES[kind]);
  const stack = [];
  for (const char of text) {
    if (char === "(" || char === "[") {
      stack.push(char);
    } else if ((char === ")" || char === "]") && (!stack.length || stack.pop() !== BRACKET_PAIRS[char])) {
      return verdict("invalid", BRACKETS_MESSAGE);
    }
  }
  if (stack.length) return verdict("invalid", BRACKETS_MESSAGE);
  const pieces = text.replace(/[[\]()]/g, " ").split(",");
  const hasComma = pieces.length > 1;
  if (hasComma && stripBlank(pieces[pieces.length - 1]) === "") pieces.pop();
  const tokens = [];
  for (const piece of pieces) {
    const words = piece.split(WS_RUN).filter((word) => word !== "");
    if (!words.length && hasComma) return verdict("invalid", EMPTY_ENTRY_MESSAGE);
    tokens.push(...words);
  }
  return tokens;
}

export function parseNumber(token) {
  const parts = token.split("/");
  if (parts.length > 2 || !parts.every((part) => NUMBER.test(part))) {
    return verdict("invalid", `${quote(token)} is not a number; write numbers like 0.25, -3, 1e-4 or 1/3.`);
  }
  let value = Number(parts[0]);
  if (parts.length === 2) {
    const denominator = Number(parts[1]);
    if (denominator === 0) return verdict("invalid", `${quote(token)} divides by zero.`);
    value = value / denominator;
  }
  if (!Number.isFinite(value)) {
    return verdict("invalid", `${quote(token)} is too large to be a finite number.`);
  }
  return value;
}

function parseNumbers(text, kind) {
  const tokens = splitEntries(text, kind);
  if (isVerdict(tokens)) return tokens;
  const values = [];
  for (const token of tokens) {
    const value = parseNumber(token);
    if (isVerdict(value)) return value;
    values.push(value);
  }
  return values;
}

function checkNumber(spec, text) {
  const values = parseNumbers(text, "number");
  if (isVerdict(values)) return values;
  if (values.length === 0) return verdict("invalid", EMPTY_MESSAGES.number);
  if (values.length > 1) return verdict("invalid", `Type one number, not ${values.length}.`);
  if (Math.abs(values[0] - spec.answer) <= spec.tolerance) {
    return verdict("correct", `Right. The answer is ${spec.answer_text}.`);
  }
  return verdict("wrong", `Not quite. The answer is ${spec.answer_text}.`);
}

function checkVector(spec, text) {
  const values = parseNumbers(text, "vector");
  if (isVerdict(values)) return values;
  const answer = spec.answer;
  if (values.length !== answer.length) {
    const count = plural(answer.length, "number", "numbers");
    return verdict("invalid", `The answer has ${count}; you typed ${values.length}.`);
  }
  const differ = [];
  values.forEach((v, i) => {
    if (!(Math.abs(v - answer[i]) <= spec.tolerance)) differ.push(i);
  });
  if (!differ.length) return verdict("correct", `Right. The answer is ${spec.answer_text}.`);
  const where = differ.length === 1
    ? `the entry at index ${differ[0]} differs`
    : `the entries at indices ${joinPositions(differ)} differ`;
  return verdict("wrong", `Not quite: ${where}. The answer is ${spec.answer_text}.`);
}

function checkShape(spec, text) {
  const tokens = splitEntries(text, "shape");
  if (isVerdict(tokens)) return tokens;
  const typed = [];
  for (const token of tokens) {
    if (!AXIS.test(token)) {
      return verdict("invalid", `${quote(token)} is not an axis length; use whole numbers such as 4.`);
    }
    typed.push(token.replace(/^0+/, "") || "0");
  }
  const answer = spec.answer.map(String);
  const answerText = spec.answer_text;
  if (typed.length !== answer.length) {
    const has = plural(answer.length, "axis", "axes");
    return verdict("wrong", `Not quite: the answer has ${has}, you gave ${typed.length}. It is ${answerText}.`);
  }
  const differ = [];
  typed.forEach((t, i) => {
    if (t !== answer[i]) differ.push(i);
  });
  if (!differ.length) return verdict("correct", `Right. The shape is ${answerText}.`);
  const where = differ.length === 1 ? `axis ${differ[0]} differs` : `axes ${joinPositions(differ)} differ`;
  return verdict("wrong", `Not quite: ${where}. The shape is ${answerText}.`);
}

function checkChoice(spec, text) {
  if (text === "") return verdict("invalid", EMPTY_MESSAGES.choice);
  if (!spec.options.includes(text)) return verdict("invalid", UNKNOWN_OPTION_MESSAGE);
  if (text === spec.answer) return verdict("correct", `Right. The answer is ${spec.answer_text}.`);
  return verdict("wrong", `Not quite. The answer is ${spec.answer_text}.`);
}

function checkExplain(spec, text) {
  if (stripBlank(text) === "") return verdict("invalid", EMPTY_MESSAGES.explain);
  return verdict("revealed", EXPLAIN_MESSAGE);
}

const CHECKS = {
  number: checkNumber,
  vector: checkVector,
  shape: checkShape,
  choice: checkChoice,
  explain: checkExplain,
};

export function check(spec, text) {
  return CHECKS[spec.kind](spec, text);
}
