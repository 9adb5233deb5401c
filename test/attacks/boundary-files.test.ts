import { attackSuites } from "./suite.js";
import { FILE_READS, FILE_WRITES } from "./vectors.js";

attackSuites([
  ["reading the canary file", FILE_READS],
  ["writing a file", FILE_WRITES],
]);
