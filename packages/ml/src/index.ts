export * from './eval';
export * from './data';
