// What a terminal's screen shows after a stream of output: a small VT model, enough to tell
// what a person at an approval question sees. It keeps a grid of characters and the cursor,
// wraps at the right edge while autowrap (DECAWM) is on and overwrites the last column while it
// is off, scrolls at the bottom, and follows cursor positioning and erasing (CUP, CUU/CUD/CUF/CUB,
// ED, EL). DECSTR turns autowrap off, as DEC's VT220 and VT510 manuals say a soft reset does
// (xterm instead restores its own default). Every other escape sequence and control string is
// consumed without effect; a character takes one column.

export class ScreenModel {
  private readonly grid: string[][];
  private row = 0;
  private column = 0;
  /** At the right edge with autowrap on: the next character goes to the start of the next row. */
  private wrapPending = false;
  private autowrap = true;

  constructor(
    readonly rows: number,
    readonly columns: number,
  ) {
    this.grid = Array.from({ length: rows }, () => this.blankRow());
  }

  /** The rows as shown, trailing blanks removed. */
  text(): string {
    return this.grid.map((cells) => cells.join("").trimEnd()).join("\n");
  }

  write(output: string): this {
    const characters = [...output];
    for (let i = 0; i < characters.length; i++) {
      const c = characters[i]!;
      if (c === "\x1b") {
        i = this.escape(characters, i + 1);
        continue;
      }
      if (c === "\r") this.carriageReturn();
      else if (c === "\n") {
        // Through the terminal's line discipline (ONLCR), a program's "\n" reaches it as "\r\n".
        this.carriageReturn();
        this.lineFeed();
      } else if (c === "\x0b" || c === "\x0c") this.lineFeed();
      else if (c === "\b") this.moveTo(this.row, this.column - 1);
      else if (c === "\t") this.moveTo(this.row, Math.min(this.columns - 1, (Math.floor(this.column / 8) + 1) * 8));
      else if (c >= " " && c !== "\x7f") this.put(c);
      // Other controls (SI, SO, CAN, BEL, …) show nothing.
    }
    return this;
  }

  private blankRow(): string[] {
    return Array.from({ length: this.columns }, () => " ");
  }

  private put(c: string): void {
    if (this.wrapPending && this.autowrap) {
      this.carriageReturn();
      this.lineFeed();
    }
    this.wrapPending = false;
    this.grid[this.row]![this.column] = c;
    if (this.column < this.columns - 1) this.column++;
    else if (this.autowrap) this.wrapPending = true;
  }

  private carriageReturn(): void {
    this.column = 0;
    this.wrapPending = false;
  }

  private lineFeed(): void {
    this.wrapPending = false;
    if (this.row < this.rows - 1) {
      this.row++;
      return;
    }
    this.grid.shift();
    this.grid.push(this.blankRow());
  }

  private moveTo(row: number, column: number): void {
    this.row = Math.max(0, Math.min(this.rows - 1, row));
    this.column = Math.max(0, Math.min(this.columns - 1, column));
    this.wrapPending = false;
  }

  /** Consumes the escape sequence or control string starting after ESC at `start`; returns the index of its last character. */
  private escape(characters: string[], start: number): number {
    const first = characters[start];
    if (first === undefined) return start - 1;
    if (first === "[") return this.controlSequence(characters, start + 1);
    if ("]P^_X".includes(first)) {
      // A control string, ended by ST (ESC \), BEL, or cancelled by CAN or SUB.
      for (let i = start + 1; i < characters.length; i++) {
        const c = characters[i]!;
        if (c === "\x07" || c === "\x18" || c === "\x1a") return i;
        if (c === "\x1b") return characters[i + 1] === "\\" ? i + 1 : i - 1;
      }
      return characters.length;
    }
    // ESC, intermediates (ESC # 6, ESC ( B), a final character.
    let i = start;
    while (i < characters.length && characters[i]! >= " " && characters[i]! <= "/") i++;
    return i;
  }

  private controlSequence(characters: string[], start: number): number {
    let i = start;
    let parameters = "";
    while (i < characters.length && characters[i]! >= "0" && characters[i]! <= "?") parameters += characters[i++];
    let intermediates = "";
    while (i < characters.length && characters[i]! >= " " && characters[i]! <= "/") intermediates += characters[i++];
    const final = characters[i];
    if (final === undefined) return i;
    const numbers = parameters.replace(/^\?/, "").split(";").map((p) => Number.parseInt(p, 10));
    const n = (index: number, fallback: number): number => (Number.isNaN(numbers[index]!) || numbers[index] === 0 ? fallback : numbers[index]!);
    if (intermediates === "!" && final === "p") {
      this.autowrap = false; // DECSTR, as DEC's manuals have it
    } else if (intermediates === "") {
      switch (final) {
        case "H":
        case "f":
          this.moveTo(n(0, 1) - 1, n(1, 1) - 1);
          break;
        case "A":
          this.moveTo(this.row - n(0, 1), this.column);
          break;
        case "B":
          this.moveTo(this.row + n(0, 1), this.column);
          break;
        case "C":
          this.moveTo(this.row, this.column + n(0, 1));
          break;
        case "D":
          this.moveTo(this.row, this.column - n(0, 1));
          break;
        case "J":
          this.eraseDisplay(Number.isNaN(numbers[0]!) ? 0 : numbers[0]!);
          break;
        case "K":
          this.eraseLine(Number.isNaN(numbers[0]!) ? 0 : numbers[0]!);
          break;
        case "h":
        case "l":
          if (parameters.startsWith("?") && numbers.includes(7)) this.autowrap = final === "h";
          break;
      }
    }
    return i;
  }

  private eraseDisplay(mode: number): void {
    if (mode === 2 || mode === 3) {
      for (let r = 0; r < this.rows; r++) this.grid[r] = this.blankRow();
      return;
    }
    this.eraseLine(mode);
    const rows = mode === 0 ? [...Array(this.rows).keys()].filter((r) => r > this.row) : [...Array(this.row).keys()];
    for (const r of rows) this.grid[r] = this.blankRow();
  }

  private eraseLine(mode: number): void {
    const cells = this.grid[this.row]!;
    for (let c = 0; c < this.columns; c++) {
      if (mode === 2 || (mode === 0 && c >= this.column) || (mode === 1 && c <= this.column)) cells[c] = " ";
    }
  }
}
