import { attackSuite } from "./suite.js";
import { FILE_READS, FILE_WRITES } from "./vectors.js";

attackSuite("reading the canary file", FILE_READS);
attackSuite("writing a file", FILE_WRITES);
