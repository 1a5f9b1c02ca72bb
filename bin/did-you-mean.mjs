// "did you mean --format?" for a mistyped command or flag: the nearest known word by edit
// distance, offered only when it is close (a typo), never a guess.

/** Levenshtein distance, small words only (flags and commands). */
function distance(a, b) {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}

/** The candidate nearest `word` when it is within a typo (≤ 2 edits, 1 for a word of 2 letters), else null. */
export function nearest(word, candidates) {
  const limit = word.length <= 2 ? 1 : 2;
  let best = null;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = distance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return bestDistance <= limit ? best : null;
}

/** " (did you mean X?)" or "". */
export const didYouMean = (word, candidates) => {
  const found = nearest(word, candidates);
  return found ? `; did you mean ${found}?` : "";
};
