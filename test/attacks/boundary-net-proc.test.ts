import { attackSuite } from "./suite.js";
import { ENV, NETWORK, SPAWN } from "./vectors.js";

attackSuite("reaching the loopback listener", NETWORK);
attackSuite("spawning and signalling processes", SPAWN);
attackSuite("reading the environment canary", ENV);
