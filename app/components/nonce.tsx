import { createContext, useContext } from "react";

// The CSP nonce of this response, for the few <script> tags a page may carry.
const NonceContext = createContext<string>("");
export const NonceProvider = NonceContext.Provider;
export function useNonce() {
  return useContext(NonceContext);
}
