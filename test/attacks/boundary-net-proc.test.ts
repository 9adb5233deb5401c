import { attackSuites } from "./suite.js";
import { ENV, NETWORK, SPAWN } from "./vectors.js";

attackSuites([
  ["reaching the loopback listener", NETWORK],
  ["spawning and signalling processes", SPAWN],
  ["reading the environment canary", ENV],
]);
