// The predict-then-check checker, in the browser. A line-for-line mirror of checker.py:
// tests/widgets/test_checker_js.py runs both on the same cases and requires equal verdicts.

// Whitespace: the same explicit set as checker.py (ASCII blanks, NBSP, U+1680, U+2000-U+200A,
// U+2028, U+2029, U+202F, U+205F, U+3000).
const WS = " \\t\\n\\r\\f\\v\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const WS_RUN = new RegExp(`[${WS}]+`);
const WS_EDGES = new RegExp(`^[${WS}]+|[${WS}]+$`, "g");
// Linear-time: after the digits only ".", "e" or the end can follow, so no split is ever retried.
const NUMBER = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;
const AXIS = /^[0-9]+$/;
const SHAPE_TIMES = /[xX\u00d7]/g;
const SHAPE_PREFIX = /^(?:torch\.)?Size(?=\()/;
const MINUS_SIGNS = /[\u2010-\u2014\u2212\ufe63\uff0d]/g;
const DECIMAL_COMMA = /^([+-]?)([0-9]+),([0-9]+)$/;
const INVISIBLE =
  /[\u0000-\u0008\u000e-\u001f\u007f-\u009f\u00ad\u034f\u061c\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufe00-\ufe0f\ufeff]/;
const INVISIBLE_NAMES = {
  0x00ad: "soft hyphen",
  0x200b: "zero-width space",
  0x200c: "zero-width non-joiner",
  0x200d: "zero-width joiner",
  0x200e: "left-to-right mark",
  0x200f: "right-to-left mark",
  0x2060: "word joiner",
  0xfeff: "byte-order mark",
};
export const MAX_INPUT = 2000; // code points, as Python counts them
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
const MODEL_ANSWER_MESSAGE = "Here is a model answer:";
const RETRY = "Try again, or show the answer.";
const SIGN_FLIPPED = "the sign is flipped";
const TWICE = "that is twice the answer";
const HALF = "that is half the answer";
const OFF_BY_ONE = "that is off by one";
const EVERY_SIGN_FLIPPED = "every sign is flipped";
const EVERY_TWICE = "every entry is twice the answer's";
const EVERY_HALF = "every entry is half the answer's";
const REVERSED = "the entries are in reverse order";
const PERMUTED = "the axis lengths are right but in another order";

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

const codePointCount = (text) => {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
};

function invisible(text) {
  const found = INVISIBLE.exec(text);
  if (found === null) return null;
  const code = found[0].codePointAt(0);
  const name = INVISIBLE_NAMES[code] ?? "an invisible control or format character";
  const position = codePointCount(text.slice(0, found.index)) + 1;
  const hex = code.toString(16).toUpperCase().padStart(4, "0");
  return verdict(
    "invalid",
    `Your answer contains an invisible character, U+${hex} (${name}), at position ${position}. ` +
      "Delete it (retype the answer by hand), then press Check.",
  );
}

function tooLong(text) {
  const length = codePointCount(text);
  if (length <= MAX_INPUT) return null;
  return verdict("invalid", `That answer is ${length} characters long; type at most ${MAX_INPUT}.`);
}

export function splitEntries(text, kind) {
  text = text.replace(MINUS_SIGNS, "-");
  if (kind === "shape") text = stripBlank(text).replace(SHAPE_PREFIX, "").replace(SHAPE_TIMES, ",");
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

function decimalComma(text) {
  const bare = stripBlank(text.replace(MINUS_SIGNS, "-"));
  const found = DECIMAL_COMMA.exec(bare);
  if (found === null) return text;
  const [, sign, whole, fraction] = found;
  if (fraction.length === 3 && whole.replace(/^0+/, "") !== "") {
    return verdict(
      "invalid",
      `${quote(bare)} could mean ${sign}${whole}${fraction} (a thousands separator) or ` +
        `${sign}${whole}.${fraction} (a decimal comma); type it without the comma, with a ` +
        "point for decimals.",
    );
  }
  return `${sign}${whole}.${fraction}`;
}

function numberMistake(typed, answer, tolerance) {
  if (Math.abs(typed + answer) <= tolerance) return SIGN_FLIPPED;
  if (Math.abs(typed - 2 * answer) <= tolerance) return TWICE;
  if (Math.abs(typed - answer / 2) <= tolerance) return HALF;
  if (
    answer === Math.floor(answer) &&
    Math.min(Math.abs(typed - answer - 1), Math.abs(typed - answer + 1)) <= tolerance
  ) {
    return OFF_BY_ONE;
  }
  return "";
}

function answerSentence(spec) {
  const noun = spec.kind === "shape" ? "shape" : "answer";
  return `The ${noun} is ${spec.answer_text}.`;
}

function wrong(mistake, spec, tries) {
  const head = mistake ? `Not quite: ${mistake}.` : "Not quite.";
  if (tries === 0) return verdict("retry", `${head} ${RETRY}`);
  return verdict("wrong", `${head} ${answerSentence(spec)}`);
}

function checkNumber(spec, text, tries) {
  text = decimalComma(text);
  if (isVerdict(text)) return text;
  const values = parseNumbers(text, "number");
  if (isVerdict(values)) return values;
  if (values.length === 0) return verdict("invalid", EMPTY_MESSAGES.number);
  if (values.length > 1) return verdict("invalid", `Type one number, not ${values.length}.`);
  const [typed, answer, tolerance] = [values[0], spec.answer, spec.tolerance];
  if (Math.abs(typed - answer) <= tolerance) {
    return verdict("correct", `Right. The answer is ${spec.answer_text}.`);
  }
  return wrong(numberMistake(typed, answer, tolerance), spec, tries);
}

function vectorMistake(values, answer, tolerance, differ) {
  const every = (close) => values.every((v, i) => close(v, answer[i]));
  if (every((v, a) => Math.abs(v + a) <= tolerance)) return EVERY_SIGN_FLIPPED;
  if (every((v, a) => Math.abs(v - 2 * a) <= tolerance)) return EVERY_TWICE;
  if (every((v, a) => Math.abs(v - a / 2) <= tolerance)) return EVERY_HALF;
  if (values.every((v, i) => Math.abs(v - answer[answer.length - 1 - i]) <= tolerance)) return REVERSED;
  const flipped = differ.every((i) => Math.abs(values[i] + answer[i]) <= tolerance);
  if (differ.length === 1) return `the entry at index ${differ[0]} ${flipped ? "has the wrong sign" : "differs"}`;
  return `the entries at indices ${joinPositions(differ)} ${flipped ? "have the wrong sign" : "differ"}`;
}

function checkVector(spec, text, tries) {
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
  return wrong(vectorMistake(values, answer, spec.tolerance, differ), spec, tries);
}

function shapeMistake(typed, answer, differ) {
  if (differ.length === 2) {
    const [i, j] = differ;
    if (typed[i] === answer[j] && typed[j] === answer[i]) {
      return `axes ${i} and ${j} are swapped, as in a transposed shape`;
    }
  }
  // Sorted as Python sorts strings (by code point): digit strings, so plain < is the same.
  const sorted = (list) => [...list].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (sorted(typed).join(",") === sorted(answer).join(",")) return PERMUTED;
  if (differ.length === 1) {
    const i = differ[0];
    // Digit strings, so compare lengths near 2**53 without floats: only short ones are +-1.
    if (typed[i].length < 16 && answer[i].length < 16 && Math.abs(Number(typed[i]) - Number(answer[i])) === 1) {
      return `axis ${i} is off by one`;
    }
    return `axis ${i} differs`;
  }
  return `axes ${joinPositions(differ)} differ`;
}

function checkShape(spec, text, tries) {
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
    return wrong(`the answer has ${has}, you gave ${typed.length}`, spec, tries);
  }
  const differ = [];
  typed.forEach((t, i) => {
    if (t !== answer[i]) differ.push(i);
  });
  if (!differ.length) return verdict("correct", `Right. The shape is ${answerText}.`);
  return wrong(shapeMistake(typed, answer, differ), spec, tries);
}

function checkChoice(spec, text, tries) {
  if (text === "") return verdict("invalid", EMPTY_MESSAGES.choice);
  if (!spec.options.includes(text)) return verdict("invalid", UNKNOWN_OPTION_MESSAGE);
  if (text === spec.answer) return verdict("correct", `Right. The answer is ${spec.answer_text}.`);
  return wrong("", spec, tries);
}

function checkExplain(spec, text, tries) {
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

export function check(spec, text, tries = 0) {
  let problem = tooLong(text);
  if (problem === null && ["number", "vector", "shape"].includes(spec.kind)) problem = invisible(text);
  return problem !== null ? problem : CHECKS[spec.kind](spec, text, tries);
}

export function answer(spec) {
  if (spec.kind === "explain") return verdict("revealed", MODEL_ANSWER_MESSAGE);
  return verdict("revealed", answerSentence(spec));
}
