// The first script to run: `npx tacit run examples/hello.ts`
import { println } from "tacit";

const name: string = "world";
println(`Hello, ${name}!`);
printf("%d + %d = %d\n", 2, 2, 2 + 2);
console.log("console.log prints to the same place:", { ok: true, items: [1, 2, 3] });
