import { badFilesApiSuite } from "./bad-files-api-suite";

badFilesApiSuite("local");
