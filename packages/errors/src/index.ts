export * from './app-error';
export * from './reasons';
export * from './http-table';
export * from './validation';
export * from './ids';
export * from './unavailable';
