export async function runLoad(..._a: unknown[]): Promise<number> { return 1; }
