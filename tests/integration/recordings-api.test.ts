import { recordingsApiSuite } from "./recordings-suite";

recordingsApiSuite("local");
