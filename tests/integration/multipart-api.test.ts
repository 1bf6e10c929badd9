import { multipartSuite } from "./multipart-suite";

multipartSuite("local");
