export async function runShell(..._a: unknown[]): Promise<number> { return 1; }
