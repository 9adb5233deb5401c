// "Did you mean …?": the known name a misspelt one most likely stands for, for messages that
// refuse a name (an unknown global in a script, an unknown key in a config file). Agents and
// people fix a typo at once when they are shown the right spelling; a list of every known
// name leaves them to find it.

/** Names longer than this are not compared: nothing tacit knows is that long, and the work is quadratic. */
const MAX_COMPARED_CHARS = 64;

/**
 * Work the suggestions of one check may do, in steps: a name compared, and each cell of a
 * comparison's table. A script's checks ask for one suggestion per unknown name it uses, among
 * every name in reach there: a script of 20,000 names of 58 characters (one prefix) and 100
 * misspellings of them held `tacit check` 142 s, the host's only thread in `tacit serve`.
 * Past the budget there are no more suggestions (the errors stay; the hint goes without them).
 */
export class SuggestionBudget {
  /**
   * 77-140 ms at worst on a shared 2-core host (20,000,000 took 290-350 ms): names of a script
   * with a few typos mostly differ in length or early on, and cost a few hundred steps each.
   */
  static readonly STEPS = 5_000_000;

  constructor(private left: number = SuggestionBudget.STEPS) {}

  get spent(): boolean {
    return this.left <= 0;
  }

  /** Takes `steps`; false once the budget is spent. */
  take(steps: number): boolean {
    this.left -= steps;
    return this.left > 0;
  }
}

/**
 * Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`, or a number
 * above `limit` once it is sure to exceed it (optimal string alignment distance); null when
 * `budget` ran out first.
 */
function editsBetween(a: string, b: string, limit: number, budget: SuggestionBudget): number | null {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    if (!budget.take(b.length)) return null;
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let edits = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) edits = Math.min(edits, before[j - 2]! + 1);
      current.push(edits);
      rowMin = Math.min(rowMin, edits);
    }
    if (rowMin > limit) return limit + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The name in `known` that `name` most likely misspells: one that differs only in case, or else
 * the nearest within a few edits (one per four characters, at least one, at most three), the
 * first listed among equals; null when none is that near (or `name` is itself known).
 */
export function closestName(name: string, known: Iterable<string>, budget: SuggestionBudget = new SuggestionBudget()): string | null {
  if (name.length === 0 || name.length > MAX_COMPARED_CHARS || budget.spent) return null;
  const limit = Math.min(3, Math.max(1, Math.floor(name.length / 4)));
  const lower = name.toLowerCase();
  let best: string | null = null;
  let bestEdits = limit + 1;
  for (const candidate of known) {
    // Out of budget: the nearest found so far, which is within the edits allowed.
    if (!budget.take(1)) return best;
    if (candidate === name) return null;
    if (candidate.length > MAX_COMPARED_CHARS) continue;
    if (candidate.toLowerCase() === lower) return candidate;
    const edits = editsBetween(name, candidate, Math.min(limit, bestEdits - 1), budget);
    if (edits === null) return best;
    if (edits < bestEdits) {
      best = candidate;
      bestEdits = edits;
    }
  }
  return best;
}
