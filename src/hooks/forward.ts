// Placeholder until the hook forwarder lands: it posts each hook event to the hook endpoint.
export {};
