export * from './models';
export * from './money';
